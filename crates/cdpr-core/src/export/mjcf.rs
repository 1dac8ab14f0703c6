//! The robot as a MuJoCo model (MJCF): what `cdpr export --mjcf` writes.
//!
//! The physics is the one of our `elastic` model ([`crate::sim`]): one rigid platform on a free
//! joint, each cable a massless spring-damper between its exit point a_i and its platform
//! anchor b_i that pulls only when stretched. In MuJoCo that is a `<spatial>` tendon between two
//! sites with `stiffness`, `damping` and `springlength="0 L0"`: a two-valued spring length is a
//! dead band (no spring force while the length is between the two values, MuJoCo ≥ 2.3), so the
//! spring pulls back only once the cable is longer than its rest length L0. Checked against the
//! pip `mujoco` 4.0.0 (`python/tests/test_mjcf.py` steps both on seed 000's trajectory) and
//! MuJoCo's own `model/replicate/tendon.xml`, which hangs a lamp the same way.
//!
//! Two differences remain, both said in the document's comments:
//! - our damper acts on the stretch rate d(L − L0)/dt, MuJoCo's tendon damping on dL/dt: one
//!   `<motor>` per cable with gear c adds the missing c·dL0/dt when its control is set to the
//!   payout rate dL0/dt (zero while the rest lengths are held, as in the exported model);
//! - MuJoCo's damper also acts on a slack cable (ours is cut with the spring, a cable cannot
//!   push); robots whose cables stay taut (tension bounds > 0) see no difference.
//!
//! Swivel pulleys ([`crate::kinematics::pulley`]) become MuJoCo wrapping geometry: per pulley a
//! cylinder (the wheel, no contacts) turned to the swivel angle of the home pose, a `_winch`
//! site a tenth of the radius upstream of the swivel point on the incoming cable, and a
//! `_side` site outside the wheel at the middle of the wrapped arc; the tendon runs winch site
//! → wheel (`sidesite` picks the side) → platform anchor. MuJoCo's tendon length is then cdpr's
//! plus that lead-in (said per cable; the spring length includes it), exactly at home. What
//! MuJoCo cannot do: the wheel does not swivel (away from home the cable leaves the wheel's
//! plane and MuJoCo wraps it helically round the fixed cylinder), capstan friction
//! (`pulley_friction`) and the cable's own mass (`cable_mass_per_length`) are not exported —
//! the document says so in a comment.

use super::ExportError;
use super::xml::Xml;
use crate::kinematics::{self, Pose};
use crate::options::{Group, choice, choices, number};
use crate::robot::{GRAVITY, Robot, Stiffness};
use crate::statics;
use nalgebra::{UnitQuaternion, Vector3};

/// How far upstream of a pulley's swivel point its tendon starts, in wheel radii: the
/// `_winch` site sits on the incoming cable, close enough that the straight line from it to
/// the platform anchor crosses the wheel (so MuJoCo wraps) and outside the wheel (as MuJoCo
/// needs).
pub const PULLEY_LEAD_IN: f64 = 0.1;

/// Time steps the export accepts, s: MuJoCo's own default is 0.002 s.
pub const MJCF_DT_RANGE: (f64, f64) = (1e-6, 0.1);

/// MuJoCo's integrators (`<option integrator>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MjcfIntegrator {
    /// Semi-implicit Euler with the damping (tendon dampers included) implicit — like our
    /// elastic model, which treats the cable dampers implicitly too.
    #[default]
    Implicitfast,
    /// Implicit in all velocity-dependent forces.
    Implicit,
    /// Semi-implicit Euler (only joint damping implicit).
    Euler,
    /// Fourth-order Runge–Kutta.
    Rk4,
}

crate::named_choice!(MjcfIntegrator, "integrator", {
    Implicitfast => "implicitfast", "semi-implicit Euler with the damping (tendon dampers included) implicit, like our elastic model";
    Implicit => "implicit", "implicit in all velocity-dependent forces";
    Euler => "euler", "semi-implicit Euler (only joint damping implicit)";
    Rk4 => "rk4", "fourth-order Runge–Kutta";
});

impl MjcfIntegrator {
    /// The value of `<option integrator>`.
    pub fn mjcf_name(self) -> &'static str {
        match self {
            MjcfIntegrator::Implicitfast => "implicitfast",
            MjcfIntegrator::Implicit => "implicit",
            MjcfIntegrator::Euler => "Euler",
            MjcfIntegrator::Rk4 => "RK4",
        }
    }
}

crate::choice_value!(MjcfIntegrator);

crate::request! {
    /// What the export does not read from the robot file (`cdpr export`'s options).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct MjcfOptions, table OPTIONS;
    /// `<option timestep>`, s, within [`MJCF_DT_RANGE`].
    dt: f64 = 0.001,
        number(Group::Command, "s", MJCF_DT_RANGE.0, MJCF_DT_RANGE.1, "S",
            "MuJoCo's time step `<option timestep>`");
    /// `<option integrator>`.
    integrator: MjcfIntegrator = MjcfIntegrator::Implicitfast,
        choice(Group::Command, choices::<MjcfIntegrator>, "INTEGRATOR",
            "MuJoCo's integrator: implicitfast treats the tendon dampers implicitly, as cdpr's \
             elastic model does");
}

/// A number as MJCF reads it: Rust's shortest representation that reads back exactly.
fn num(x: f64) -> String {
    // -0 reads fine but looks odd in a file meant to be read.
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x}")
    }
}

fn vec3(v: &Vector3<f64>) -> String {
    format!("{} {} {}", num(v.x), num(v.y), num(v.z))
}

/// Element names for the cables: the robot file's names, made unique (MuJoCo refuses two
/// tendons or sites of one name; a robot file may repeat one) by appending the cable's number.
fn cable_names(robot: &Robot) -> Vec<String> {
    let names: Vec<&str> = robot.cables.iter().map(|c| c.name.as_str()).collect();
    names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let repeated = names.iter().filter(|m| *m == n).count() > 1;
            if n.is_empty() || repeated {
                format!("{n}_{}", k + 1)
            } else {
                n.to_string()
            }
        })
        .collect()
}

/// The robot as a self-contained MJCF document (see the module's documentation): frame anchor
/// sites, the platform on a free joint at the home pose with the file's mass and inertia, one
/// spatial tendon per cable with the file's stiffness and damping and a one-sided spring whose
/// rest length holds the platform at home (L0 = L − f*/k, f* the tension distribution there:
/// `cdpr equilibrium --pretensioned-at HOME`). Comments in the document say where each number
/// comes from.
pub fn mjcf(robot: &Robot, options: &MjcfOptions) -> Result<String, ExportError> {
    if !robot.is_cable_robot() {
        return Err(ExportError::NotCableRobot {
            name: robot.name.clone(),
            kind: robot.mechanism.kind(),
        });
    }
    let (min, max) = MJCF_DT_RANGE;
    if !(options.dt.is_finite() && (min..=max).contains(&options.dt)) {
        return Err(ExportError::BadStep {
            dt: options.dt,
            min,
            max,
        });
    }
    let home = AtHome::of(robot)?;
    let mut x = Xml::new();
    header(&mut x, robot);
    x.open("mujoco", &[("model", robot.name.clone())]);
    settings(&mut x, options);
    x.open("worldbody", &[]);
    x.empty(
        "light",
        &[
            ("name", "top".into()),
            ("pos", "0 0 4".into()),
            ("dir", "0 0 -1".into()),
            ("directional", "true".into()),
        ],
    );
    x.comment("frame anchors a_i (cable exit points), world frame, m: [cables] frame_anchors");
    for (cable, name) in robot.cables.iter().zip(&home.names) {
        site(
            &mut x,
            &format!("{name}_frame"),
            &cable.frame_anchor,
            "0.01",
            "0.9 0.6 0.1 1",
        );
    }
    pulleys(&mut x, robot, &home);
    platform(&mut x, robot, &home);
    x.close("worldbody");
    tendons(&mut x, robot, &home);
    actuators(&mut x, robot, &home);
    x.close("mujoco");
    Ok(x.finish())
}

/// The robot at its home pose, as the document writes it: the cables' IK lengths, their
/// pre-tensioned rest lengths and tensions there, their geometry, names and lead-ins.
struct AtHome {
    pose: Pose,
    lengths: Vec<f64>,
    rest: Vec<f64>,
    tensions: Vec<f64>,
    names: Vec<String>,
    geometry: Vec<kinematics::CableGeometry>,
    /// The lead-in of each tendon before its pulley: from the `_winch` site to the swivel point.
    lead_in: Vec<f64>,
}

impl AtHome {
    fn of(robot: &Robot) -> Result<AtHome, ExportError> {
        let pose = kinematics::effective_pose(robot, &Pose::from_array(robot.home));
        let lengths = kinematics::lengths(robot, &pose);
        let (rest, dist) = statics::pretensioned_rest_lengths(robot, &pose, robot.tension)
            .map_err(|source| ExportError::HomeInfeasible {
                name: robot.name.clone(),
                home: pose.to_array(),
                source,
            })?;
        for (k, c) in robot.cables.iter().enumerate() {
            if !(rest[k].is_finite() && rest[k] > 0.0) {
                return Err(ExportError::RestLength {
                    cable: k + 1,
                    name: c.name.clone(),
                    rest: rest[k],
                    length: lengths[k],
                    tension: dist.tensions[k],
                });
            }
        }
        let rotation = pose.rotation();
        let geometry = robot
            .cables
            .iter()
            .map(|c| kinematics::CableGeometry::new(c, &pose.position, rotation.matrix()))
            .collect();
        let lead_in = robot
            .cables
            .iter()
            .map(|c| c.pulley.map_or(0.0, |p| PULLEY_LEAD_IN * p.radius))
            .collect();
        Ok(AtHome {
            pose,
            lengths,
            rest,
            tensions: dist.tensions,
            names: cable_names(robot),
            geometry,
            lead_in,
        })
    }
}

/// `<site name pos size rgba/>`.
fn site(x: &mut Xml, name: &str, pos: &Vector3<f64>, size: &str, rgba: &str) {
    x.empty(
        "site",
        &[
            ("name", name.to_string()),
            ("pos", vec3(pos)),
            ("size", size.into()),
            ("rgba", rgba.into()),
        ],
    );
}

/// The comments before the document: what, from where, how to open it.
fn header(x: &mut Xml, robot: &Robot) {
    x.comment(&format!(
        "{}: {}. Exported by cdpr {} (`cdpr export`) from {}. SI units: m, kg, s, N.",
        robot.name,
        robot.description,
        env!("CARGO_PKG_VERSION"),
        robot.path.as_ref().map_or_else(
            || format!("robots/{}.toml", robot.name),
            |p| p.display().to_string()
        )
    ));
    x.comment(&format!("Source of the robot: {}", robot.source));
    x.comment(
        "Open it in MuJoCo's viewer: python -m mujoco.viewer (pip install mujoco). The cables are spatial tendons \
        with one-sided springs: springlength=\"0 L0\" is a dead band, no spring force while \
        the cable is shorter than its rest length L0 (a cable does not push).",
    );
}

/// The compiler, the step, gravity, the integrator and the camera.
fn settings(x: &mut Xml, options: &MjcfOptions) {
    x.empty(
        "compiler",
        &[("angle", "radian".into()), ("autolimits", "true".into())],
    );
    x.comment(&format!(
        "timestep: the export's time step (dt); gravity: cdpr's {GRAVITY} m/s² along −z; integrator {}: \
         the tendon dampers implicit, as in cdpr's elastic model",
        options.integrator.mjcf_name()
    ));
    x.empty(
        "option",
        &[
            ("timestep", num(options.dt)),
            ("gravity", format!("0 0 {}", num(-GRAVITY))),
            ("integrator", options.integrator.mjcf_name().into()),
        ],
    );
    x.open("visual", &[]);
    x.empty(
        "global",
        &[("azimuth", "120".into()), ("elevation", "-25".into())],
    );
    x.close("visual");
}

/// Each swivel pulley's wheel and its `_winch` and `_side` sites, at the home pose.
fn pulleys(x: &mut Xml, robot: &Robot, home: &AtHome) {
    if robot.cables.iter().any(|c| c.pulley.is_some()) {
        x.comment(&format!(
            "swivel pulleys ([cables] pulley_radius, pulley_axis): each wheel a cylinder \
             turned to its swivel angle at home (MuJoCo cannot swivel it: away from home the \
             cable wraps the fixed wheel helically), a _winch site {} r upstream of the swivel \
             point on the incoming cable and a _side site outside the wheel at the middle of \
             the wrapped arc. Not exported: capstan friction (pulley_friction) and the cable's \
             mass (cable_mass_per_length)",
            num(PULLEY_LEAD_IN)
        ));
    }
    for ((cable, name), g) in robot.cables.iter().zip(&home.names).zip(&home.geometry) {
        let (Some(pulley), Some(wheel)) = (&cable.pulley, &g.pulley) else {
            continue;
        };
        let (r, z) = (pulley.radius, pulley.axis);
        let axle = z.cross(&wheel.radial);
        let middle = std::f64::consts::PI + 0.5 * wheel.wrap;
        let side = wheel.center + (wheel.radial * middle.cos() + z * middle.sin()) * (2.0 * r);
        x.comment(&format!(
            "{}: r {} m, axis [{}], swivel γ {} rad, wrap β {} rad at home, μ {} (not exported)",
            cable.name,
            num(r),
            vec3(&z),
            num(wheel.swivel),
            num(wheel.wrap),
            num(pulley.friction)
        ));
        let winch = cable.frame_anchor + z * (PULLEY_LEAD_IN * r);
        site(
            x,
            &format!("{name}_winch"),
            &winch,
            "0.005",
            "0.9 0.6 0.1 1",
        );
        x.empty(
            "geom",
            &[
                ("name", format!("{name}_wheel")),
                ("type", "cylinder".into()),
                ("size", format!("{} {}", num(r), num(0.2 * r))),
                ("pos", vec3(&wheel.center)),
                ("zaxis", vec3(&axle)),
                ("contype", "0".into()),
                ("conaffinity", "0".into()),
                ("mass", "0".into()),
                ("rgba", "0.9 0.6 0.1 0.5".into()),
            ],
        );
        site(
            x,
            &format!("{name}_side"),
            &side,
            "0.002",
            "0.9 0.6 0.1 0.3",
        );
    }
}

/// The platform: a free body at the home pose with the file's inertia, its drawn box and
/// its anchor sites.
fn platform(x: &mut Xml, robot: &Robot, home: &AtHome) {
    let p = &robot.platform;
    let q = UnitQuaternion::from_rotation_matrix(&home.pose.rotation());
    x.comment(&format!(
        "the platform at the robot's home pose: home = [{}] (x, y, z m; roll, pitch, yaw rad, \
         R = Rz(yaw)·Ry(pitch)·Rx(roll), written as the quaternion w x y z){}",
        home.pose.to_array().map(num).join(", "),
        if robot.dof == crate::robot::Dof::Three {
            "; a 3-DOF robot: orientation held at zero"
        } else {
            ""
        }
    ));
    x.open(
        "body",
        &[
            ("name", "platform".into()),
            ("pos", vec3(&home.pose.position)),
            (
                "quat",
                format!("{} {} {} {}", num(q.w), num(q.i), num(q.j), num(q.k)),
            ),
        ],
    );
    x.empty("freejoint", &[("name", "platform".into())]);
    let i = &p.inertia;
    x.comment(
        "[platform] mass (kg), com (m, platform frame) and the inertia tensor about the com \
         (kg·m², platform axes; fullinertia = Ixx Iyy Izz Ixy Ixz Iyz) as cdpr computed it \
         from the robot file",
    );
    let inertia = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)].map(|(r, c)| num(i[(r, c)]));
    x.empty(
        "inertial",
        &[
            ("pos", vec3(&p.com)),
            ("mass", num(p.mass)),
            ("fullinertia", inertia.join(" ")),
        ],
    );
    x.comment(
        "the drawn box ([platform] size, box_center): no contacts, no mass (the inertial above \
        is the platform's)",
    );
    x.empty(
        "geom",
        &[
            ("name", "platform".into()),
            ("type", "box".into()),
            ("size", vec3(&(p.size * 0.5))),
            ("pos", vec3(&p.box_center)),
            ("contype", "0".into()),
            ("conaffinity", "0".into()),
            ("rgba", "0.3 0.5 0.8 0.6".into()),
        ],
    );
    x.comment("platform anchors b_i, platform frame, m: [cables] platform_anchors");
    for (cable, name) in robot.cables.iter().zip(&home.names) {
        let name = format!("{name}_platform");
        site(x, &name, &cable.platform_anchor, "0.008", "0.9 0.2 0.2 1");
    }
    x.close("body");
}

/// One spatial tendon per cable, its spring resting at the pre-tensioned length.
fn tendons(x: &mut Xml, robot: &Robot, home: &AtHome) {
    x.open("tendon", &[]);
    x.comment(&format!(
        "one spatial tendon per cable, a_i → b_i. stiffness k (N/m), damping c (N·s/m): \
         [cables] stiffness/ea and damping. springlength \"0 L0\": L0 = L − f*/k, L the IK \
         length at home and f* the minimum-norm tension distribution there within [tension] \
         [{}, {}] N (`cdpr equilibrium`, option pretensioned-at HOME): the model hangs at home. No \
         range: the robot file gives no winch length limits.",
        num(robot.tension.min),
        num(robot.tension.max)
    ));
    for (k, (cable, name)) in robot.cables.iter().zip(&home.names).enumerate() {
        let (rest, lead_in) = (home.rest[k], home.lead_in[k]);
        let stiffness = cable.stiffness_at(rest);
        let how_k = match cable.stiffness {
            Stiffness::Constant(_) => String::new(),
            Stiffness::Ea(ea) => format!(
                ", k = EA/L0 = {} N / {} m at the home rest length (MuJoCo's stiffness is constant)",
                num(ea),
                num(rest)
            ),
        };
        let how_lead = if cable.pulley.is_some() {
            format!(
                "; over its pulley: MuJoCo's length = L + {} m from the _winch site, so the spring \
                 length is L0 + {} m",
                num(lead_in),
                num(lead_in)
            )
        } else {
            String::new()
        };
        x.comment(&format!(
            "{}: L {} m, f* {} N, L0 {} m, k {} N/m, c {} N·s/m{how_k}{how_lead}",
            cable.name,
            num(home.lengths[k]),
            num(home.tensions[k]),
            num(rest),
            num(stiffness),
            num(cable.damping)
        ));
        x.open(
            "spatial",
            &[
                ("name", name.clone()),
                ("stiffness", num(stiffness)),
                ("damping", num(cable.damping)),
                ("springlength", format!("0 {}", num(rest + lead_in))),
                ("width", "0.003".into()),
                ("rgba", "0.2 0.2 0.2 1".into()),
            ],
        );
        if cable.pulley.is_some() {
            x.empty("site", &[("site", format!("{name}_winch"))]);
            x.empty(
                "geom",
                &[
                    ("geom", format!("{name}_wheel")),
                    ("sidesite", format!("{name}_side")),
                ],
            );
        } else {
            x.empty("site", &[("site", format!("{name}_frame"))]);
        }
        x.empty("site", &[("site", format!("{name}_platform"))]);
        x.close("spatial");
    }
    x.close("tendon");
}

/// One motor per cable for the payout-rate term of its damper.
fn actuators(x: &mut Xml, robot: &Robot, home: &AtHome) {
    x.open("actuator", &[]);
    x.comment(
        "the payout-rate term of each damper: cdpr's damper acts on the stretch rate \
        d(L − L0)/dt, MuJoCo's tendon damping on dL/dt. To change the rest lengths over time \
        (model.tendon_lengthspring[i] = [0, L0_i(t)]), set ctrl[i] = dL0_i/dt (m/s): gear c \
        adds the force c·dL0/dt along the cable. Zero while the rest lengths are held.",
    );
    for (cable, name) in robot.cables.iter().zip(&home.names) {
        x.empty(
            "motor",
            &[
                ("name", format!("{name}_payout_rate")),
                ("tendon", name.clone()),
                ("gear", num(cable.damping)),
                ("ctrllimited", "false".into()),
            ],
        );
    }
    x.close("actuator");
}

#[cfg(test)]
mod tests;
