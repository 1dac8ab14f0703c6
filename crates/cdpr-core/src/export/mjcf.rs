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
use crate::kinematics::{self, Pose};
use crate::options::{Group, choice, choices, number};
use crate::robot::{GRAVITY, Robot, Stiffness};
use crate::statics;
use nalgebra::{UnitQuaternion, Vector3};
use std::fmt::Write as _;

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
    pub struct MjcfOptions for "export", table OPTIONS;
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

/// `text` made safe inside a double-quoted XML attribute (and in element text).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0 (tab, newline excepted).
            c if c.is_control() && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as the body of an XML comment: no `--` inside, no `-` at the end, one line.
fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        let ch = if ch.is_control() { ' ' } else { ch };
        if ch == '-' && out.ends_with('-') {
            out.push(' ');
        }
        out.push(ch);
    }
    if out.ends_with('-') {
        out.push(' ');
    }
    out
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
    let home = kinematics::effective_pose(robot, &Pose::from_array(robot.home));
    let lengths = kinematics::lengths(robot, &home);
    let (rest, dist) =
        statics::pretensioned_rest_lengths(robot, &home, robot.tension).map_err(|source| {
            ExportError::HomeInfeasible {
                name: robot.name.clone(),
                home: home.to_array(),
                source,
            }
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
    let names = cable_names(robot);
    let rotation = home.rotation();
    let at_home: Vec<kinematics::CableGeometry> = robot
        .cables
        .iter()
        .map(|c| kinematics::CableGeometry::new(c, &home.position, rotation.matrix()))
        .collect();
    // The lead-in of each tendon before its pulley: from the `_winch` site to the swivel point.
    let lead_in: Vec<f64> = robot
        .cables
        .iter()
        .map(|c| c.pulley.map_or(0.0, |p| PULLEY_LEAD_IN * p.radius))
        .collect();
    let p = &robot.platform;
    let q = UnitQuaternion::from_rotation_matrix(&home.rotation());
    let h = home.to_array();

    let mut x = String::new();
    // Writing into a String cannot fail: the results of writeln! are ignored below.
    let mut line = |indent: usize, text: &str| {
        let _ = writeln!(x, "{:indent$}{text}", "", indent = indent * 2);
    };
    let c = |text: &str| format!("<!-- {} -->", comment_text(text));

    line(0, r#"<?xml version="1.0" encoding="utf-8"?>"#);
    line(
        0,
        &c(&format!(
            "{}: {}. Exported by cdpr {} (`cdpr export`) from {}. SI units: m, kg, s, N.",
            robot.name,
            robot.description,
            env!("CARGO_PKG_VERSION"),
            robot.path.as_ref().map_or_else(
                || format!("robots/{}.toml", robot.name),
                |p| p.display().to_string()
            )
        )),
    );
    line(0, &c(&format!("Source of the robot: {}", robot.source)));
    line(
        0,
        &c(
            "Open it in MuJoCo's viewer: python -m mujoco.viewer (pip install mujoco). The cables are spatial tendons \
            with one-sided springs: springlength=\"0 L0\" is a dead band, no spring force while \
            the cable is shorter than its rest length L0 (a cable does not push).",
        ),
    );
    line(0, &format!(r#"<mujoco model="{}">"#, escape(&robot.name)));
    line(1, r#"<compiler angle="radian" autolimits="true"/>"#);
    line(
        1,
        &c(&format!(
            "timestep: the export's time step (dt); gravity: cdpr's {GRAVITY} m/s² along −z; integrator {}: \
             the tendon dampers implicit, as in cdpr's elastic model",
            options.integrator.mjcf_name()
        )),
    );
    line(
        1,
        &format!(
            r#"<option timestep="{}" gravity="0 0 {}" integrator="{}"/>"#,
            num(options.dt),
            num(-GRAVITY),
            options.integrator.mjcf_name()
        ),
    );
    line(1, "<visual>");
    line(2, r#"<global azimuth="120" elevation="-25"/>"#);
    line(1, "</visual>");
    line(1, "<worldbody>");
    line(
        2,
        r#"<light name="top" pos="0 0 4" dir="0 0 -1" directional="true"/>"#,
    );
    line(
        2,
        &c("frame anchors a_i (cable exit points), world frame, m: [cables] frame_anchors"),
    );
    for (cable, name) in robot.cables.iter().zip(&names) {
        line(
            2,
            &format!(
                r#"<site name="{}_frame" pos="{}" size="0.01" rgba="0.9 0.6 0.1 1"/>"#,
                escape(name),
                vec3(&cable.frame_anchor)
            ),
        );
    }
    let has_pulleys = robot.cables.iter().any(|c| c.pulley.is_some());
    if has_pulleys {
        line(
            2,
            &c(&format!(
                "swivel pulleys ([cables] pulley_radius, pulley_axis): each wheel a cylinder \
                 turned to its swivel angle at home (MuJoCo cannot swivel it: away from home the \
                 cable wraps the fixed wheel helically), a _winch site {} r upstream of the swivel \
                 point on the incoming cable and a _side site outside the wheel at the middle of \
                 the wrapped arc. Not exported: capstan friction (pulley_friction) and the cable's \
                 mass (cable_mass_per_length)",
                num(PULLEY_LEAD_IN)
            )),
        );
    }
    for ((cable, name), g) in robot.cables.iter().zip(&names).zip(&at_home) {
        let (Some(pulley), Some(wheel)) = (&cable.pulley, &g.pulley) else {
            continue;
        };
        let (r, z) = (pulley.radius, pulley.axis);
        let axle = z.cross(&wheel.radial);
        let middle = std::f64::consts::PI + 0.5 * wheel.wrap;
        let side = wheel.center + (wheel.radial * middle.cos() + z * middle.sin()) * (2.0 * r);
        line(
            2,
            &c(&format!(
                "{}: r {} m, axis [{}], swivel γ {} rad, wrap β {} rad at home, μ {} (not exported)",
                cable.name,
                num(r),
                vec3(&z),
                num(wheel.swivel),
                num(wheel.wrap),
                num(pulley.friction)
            )),
        );
        line(
            2,
            &format!(
                r#"<site name="{}_winch" pos="{}" size="0.005" rgba="0.9 0.6 0.1 1"/>"#,
                escape(name),
                vec3(&(cable.frame_anchor + z * (PULLEY_LEAD_IN * r)))
            ),
        );
        line(
            2,
            &format!(
                r#"<geom name="{}_wheel" type="cylinder" size="{} {}" pos="{}" zaxis="{}" contype="0" conaffinity="0" mass="0" rgba="0.9 0.6 0.1 0.5"/>"#,
                escape(name),
                num(r),
                num(0.2 * r),
                vec3(&wheel.center),
                vec3(&axle)
            ),
        );
        line(
            2,
            &format!(
                r#"<site name="{}_side" pos="{}" size="0.002" rgba="0.9 0.6 0.1 0.3"/>"#,
                escape(name),
                vec3(&side)
            ),
        );
    }
    line(
        2,
        &c(&format!(
            "the platform at the robot's home pose: home = [{}] (x, y, z m; roll, pitch, yaw rad, \
             R = Rz(yaw)·Ry(pitch)·Rx(roll), written as the quaternion w x y z){}",
            h.map(num).join(", "),
            if robot.dof == crate::robot::Dof::Three {
                "; a 3-DOF robot: orientation held at zero"
            } else {
                ""
            }
        )),
    );
    line(
        2,
        &format!(
            r#"<body name="platform" pos="{}" quat="{} {} {} {}">"#,
            vec3(&home.position),
            num(q.w),
            num(q.i),
            num(q.j),
            num(q.k)
        ),
    );
    line(3, r#"<freejoint name="platform"/>"#);
    let i = &p.inertia;
    line(
        3,
        &c(
            "[platform] mass (kg), com (m, platform frame) and the inertia tensor about the com \
             (kg·m², platform axes; fullinertia = Ixx Iyy Izz Ixy Ixz Iyz) as cdpr computed it \
             from the robot file",
        ),
    );
    line(
        3,
        &format!(
            r#"<inertial pos="{}" mass="{}" fullinertia="{} {} {} {} {} {}"/>"#,
            vec3(&p.com),
            num(p.mass),
            num(i[(0, 0)]),
            num(i[(1, 1)]),
            num(i[(2, 2)]),
            num(i[(0, 1)]),
            num(i[(0, 2)]),
            num(i[(1, 2)])
        ),
    );
    line(
        3,
        &c(
            "the drawn box ([platform] size, box_center): no contacts, no mass (the inertial above \
            is the platform's)",
        ),
    );
    line(
        3,
        &format!(
            r#"<geom name="platform" type="box" size="{}" pos="{}" contype="0" conaffinity="0" rgba="0.3 0.5 0.8 0.6"/>"#,
            vec3(&(p.size * 0.5)),
            vec3(&p.box_center)
        ),
    );
    line(
        3,
        &c("platform anchors b_i, platform frame, m: [cables] platform_anchors"),
    );
    for (cable, name) in robot.cables.iter().zip(&names) {
        line(
            3,
            &format!(
                r#"<site name="{}_platform" pos="{}" size="0.008" rgba="0.9 0.2 0.2 1"/>"#,
                escape(name),
                vec3(&cable.platform_anchor)
            ),
        );
    }
    line(2, "</body>");
    line(1, "</worldbody>");

    line(1, "<tendon>");
    line(
        2,
        &c(&format!(
            "one spatial tendon per cable, a_i → b_i. stiffness k (N/m), damping c (N·s/m): \
             [cables] stiffness/ea and damping. springlength \"0 L0\": L0 = L − f*/k, L the IK \
             length at home and f* the minimum-norm tension distribution there within [tension] \
             [{}, {}] N (`cdpr equilibrium`, option pretensioned-at HOME): the model hangs at home. No \
             range: the robot file gives no winch length limits.",
            num(robot.tension.min),
            num(robot.tension.max)
        )),
    );
    for (k, (cable, name)) in robot.cables.iter().zip(&names).enumerate() {
        let stiffness = cable.stiffness_at(rest[k]);
        let how_k = match cable.stiffness {
            Stiffness::Constant(_) => String::new(),
            Stiffness::Ea(ea) => format!(
                ", k = EA/L0 = {} N / {} m at the home rest length (MuJoCo's stiffness is constant)",
                num(ea),
                num(rest[k])
            ),
        };
        let how_lead = if cable.pulley.is_some() {
            format!(
                "; over its pulley: MuJoCo's length = L + {} m from the _winch site, so the spring \
                 length is L0 + {} m",
                num(lead_in[k]),
                num(lead_in[k])
            )
        } else {
            String::new()
        };
        line(
            2,
            &c(&format!(
                "{}: L {} m, f* {} N, L0 {} m, k {} N/m, c {} N·s/m{how_k}{how_lead}",
                cable.name,
                num(lengths[k]),
                num(dist.tensions[k]),
                num(rest[k]),
                num(stiffness),
                num(cable.damping)
            )),
        );
        line(
            2,
            &format!(
                r#"<spatial name="{}" stiffness="{}" damping="{}" springlength="0 {}" width="0.003" rgba="0.2 0.2 0.2 1">"#,
                escape(name),
                num(stiffness),
                num(cable.damping),
                num(rest[k] + lead_in[k])
            ),
        );
        if cable.pulley.is_some() {
            line(3, &format!(r#"<site site="{}_winch"/>"#, escape(name)));
            line(
                3,
                &format!(
                    r#"<geom geom="{}_wheel" sidesite="{}_side"/>"#,
                    escape(name),
                    escape(name)
                ),
            );
        } else {
            line(3, &format!(r#"<site site="{}_frame"/>"#, escape(name)));
        }
        line(3, &format!(r#"<site site="{}_platform"/>"#, escape(name)));
        line(2, "</spatial>");
    }
    line(1, "</tendon>");

    line(1, "<actuator>");
    line(
        2,
        &c(
            "the payout-rate term of each damper: cdpr's damper acts on the stretch rate \
            d(L − L0)/dt, MuJoCo's tendon damping on dL/dt. To change the rest lengths over time \
            (model.tendon_lengthspring[i] = [0, L0_i(t)]), set ctrl[i] = dL0_i/dt (m/s): gear c \
            adds the force c·dL0/dt along the cable. Zero while the rest lengths are held.",
        ),
    );
    for (cable, name) in robot.cables.iter().zip(&names) {
        line(
            2,
            &format!(
                r#"<motor name="{}_payout_rate" tendon="{}" gear="{}" ctrllimited="false"/>"#,
                escape(name),
                escape(name),
                num(cable.damping)
            ),
        );
    }
    line(1, "</actuator>");
    line(0, "</mujoco>");
    Ok(x)
}

#[cfg(test)]
mod tests;
