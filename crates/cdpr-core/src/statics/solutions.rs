//! What `cdpr tensions` and `cdpr equilibrium` report: serialisable structs (their serde form
//! is the command's `--json`), the verdicts and warnings included. The command line only
//! formats them.

pub use super::heavy::DIRECTION_TOLERANCE;
use super::{EquilibriumOptions, StaticsError, elastic_equilibrium, pretensioned_rest_lengths};
use crate::kinematics::{self, AngleUnit, Pose, effective_pose, pose_warnings, wrap_angle};
use crate::options::{Group, OptionSpec, number};
use crate::robot::{MAX_TENSION, Robot, TensionBounds};
use serde::Serialize;

/// The robot file's tension bounds with the user's overrides, checked:
/// 0 ≤ min < max, both finite.
/// `f_min`: a minimum tension replacing the robot file's, N.
pub const F_MIN: OptionSpec = OptionSpec {
    name: "f_min",
    ..number(
        Group::Command,
        "N",
        0.0,
        MAX_TENSION,
        "N",
        "minimum tension, replacing the robot file's",
    )
    .default_text("the robot file's")
};

/// `f_max`: a maximum tension replacing the robot file's, N.
pub const F_MAX: OptionSpec = OptionSpec {
    name: "f_max",
    ..number(
        Group::Command,
        "N",
        0.0,
        MAX_TENSION,
        "N",
        "maximum tension, replacing the robot file's",
    )
    .default_text("the robot file's")
};

pub fn tension_bounds(
    robot: &Robot,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<TensionBounds, StaticsError> {
    let b = TensionBounds {
        min: min.unwrap_or(robot.tension.min),
        max: max.unwrap_or(robot.tension.max),
    };
    if b.min.is_finite() && b.max.is_finite() && b.min >= 0.0 && b.max > b.min {
        Ok(b)
    } else {
        Err(StaticsError::BadBounds {
            min: b.min,
            max: b.max,
        })
    }
}

/// The tension distribution at a pose, as `cdpr tensions` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensionsReport {
    pub robot: String,
    /// The pose used (angles of a 3-DOF robot held at zero), angles in the unit asked for.
    pub pose: [f64; 6],
    /// N, one per cable; when infeasible, the closest tensions (see `verdict`).
    pub tensions: Vec<f64>,
    pub feasible: bool,
    /// ‖W f + w_g‖ over the controlled rows (force rows in N and moment rows in N·m, mixed:
    /// see `residual_force` and `residual_moment`).
    pub residual: f64,
    /// ‖force rows of W f + w_g‖, N.
    pub residual_force: f64,
    /// ‖moment rows of W f + w_g‖, N·m (None for a 3-DOF robot: no moment rows).
    pub residual_moment: Option<f64>,
    pub largest_min_tension: Option<f64>,
    pub f_min: f64,
    pub f_max: f64,
    /// Platform mass, kg.
    pub mass: f64,
    /// Cables with mass only: `tensions` are then the platform-end tensions and these the
    /// tensions at each cable's exit point (pulley/frame side), N.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_tensions: Option<Vec<f64>>,
    /// Cables with mass only: each cable's sag below its chord, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sags: Option<Vec<f64>>,
    /// Cables with mass only: rounds of the catenary fixed point (directions settled within
    /// `statics::heavy::DIRECTION_TOLERANCE` = 1e-12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catenary_rounds: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl TensionsReport {
    /// Why the distribution is infeasible and what the tensions shown are (None: feasible).
    pub fn verdict(&self) -> Option<String> {
        if self.feasible {
            return None;
        }
        Some(match self.largest_min_tension {
            Some(t) => format!(
                "infeasible: no tensions in [{}, {}] N hold the platform here; the largest achievable minimum tension is {t:.4} N (shown: those tensions)",
                self.f_min, self.f_max
            ),
            None => format!(
                "infeasible: no tensions ≤ {} N hold the platform here (outside the wrench-feasible workspace); shown: the closest, leaving a residual of {}",
                self.f_max,
                residual_text(self.residual_force, self.residual_moment)
            ),
        })
    }
}

/// Minimum-norm tensions within `bounds` that hold `robot`'s platform at `pose`.
pub fn tensions_report(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
    unit: AngleUnit,
) -> TensionsReport {
    let used = effective_pose(robot, pose);
    let mut warnings = pose_warnings(robot, pose, "pose");
    let (d, heavy) = if robot.has_cable_mass() {
        let h = super::heavy::heavy_tension_distribution(robot, pose, bounds);
        if !h.converged {
            warnings.push(format!(
                "the catenary tension distribution did not settle in {} rounds",
                h.rounds
            ));
        }
        (h.distribution.clone(), Some(h))
    } else {
        (super::tension_distribution(robot, pose, bounds), None)
    };
    let (residual_force, residual_moment) = match &heavy {
        Some(h) => heavy_residual_parts(robot, &used, &d.tensions, &h.directions),
        None => residual_parts(robot, &used, &d.tensions),
    };
    TensionsReport {
        robot: robot.name.clone(),
        pose: unit.pose(&used),
        tensions: d.tensions,
        feasible: d.feasible,
        residual: d.residual,
        residual_force,
        residual_moment,
        largest_min_tension: d.largest_min_tension,
        f_min: bounds.min,
        f_max: bounds.max,
        mass: robot.platform.mass,
        exit_tensions: heavy.as_ref().map(|h| h.exit_tensions.clone()),
        sags: heavy.as_ref().map(|h| h.sags.clone()),
        catenary_rounds: heavy.as_ref().map(|h| h.rounds),
        warnings,
    }
}

/// [`residual_parts`] with the cables pulling along `directions` (catenary tangents).
fn heavy_residual_parts(
    robot: &Robot,
    pose: &Pose,
    tensions: &[f64],
    directions: &[nalgebra::Vector3<f64>],
) -> (f64, Option<f64>) {
    let ik = kinematics::inverse(robot, pose);
    let w = super::heavy::wrench_matrix_with(&ik, directions);
    let r = &w * nalgebra::DVector::from_column_slice(tensions) + super::gravity_rows(robot, &ik);
    let force = r.rows(0, r.len().min(3)).norm();
    let moment = (r.len() > 3).then(|| r.rows(3, r.len() - 3).norm());
    (force, moment)
}

/// What `cdpr ik --catenary` adds: the unstretched lengths that put the platform on target
/// with every cable sagging as its catenary under the minimum-norm tension distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatenaryIk {
    /// Unstretched cable lengths from the swivel point, m.
    pub rest_lengths: Vec<f64>,
    /// rest_lengths − the geometric (straight, IK) lengths, m.
    pub length_change: Vec<f64>,
    /// Platform-end tensions, N.
    pub tensions: Vec<f64>,
    /// Exit-end (pulley side) tensions, N.
    pub exit_tensions: Vec<f64>,
    /// Sag of each cable below its chord, m.
    pub sags: Vec<f64>,
    /// Rounds of the catenary fixed point.
    pub rounds: usize,
}

/// The catenary lengths of `robot` at `pose` within `bounds` (a massless robot gets the
/// pre-tensioned straight rest lengths, sags 0).
pub fn catenary_ik(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
) -> Result<CatenaryIk, StaticsError> {
    let pose = effective_pose(robot, pose);
    let h = if robot.has_cable_mass() {
        super::heavy::catenary_rest_lengths(robot, &pose, bounds)?
    } else {
        let (rest, d) = pretensioned_rest_lengths(robot, &pose, bounds)?;
        let mut h = super::heavy::heavy_tension_distribution(robot, &pose, bounds);
        h.rest_lengths = rest;
        h.distribution = d;
        h
    };
    let lengths = kinematics::lengths(robot, &pose);
    Ok(CatenaryIk {
        length_change: h
            .rest_lengths
            .iter()
            .zip(&lengths)
            .map(|(a, b)| a - b)
            .collect(),
        rest_lengths: h.rest_lengths,
        tensions: h.distribution.tensions,
        exit_tensions: h.exit_tensions,
        sags: h.sags,
        rounds: h.rounds,
    })
}

/// The force (N) and moment (N·m, None for a 3-DOF robot) parts of W f + w_g at `pose`.
pub fn residual_parts(robot: &Robot, pose: &Pose, tensions: &[f64]) -> (f64, Option<f64>) {
    let r = super::wrench_residual(robot, pose, tensions);
    let force = r.rows(0, r.len().min(3)).norm();
    let moment = (r.len() > 3).then(|| r.rows(3, r.len() - 3).norm());
    (force, moment)
}

/// "2.033 N (force), 0.0104 N·m (moment)": each part of a residual wrench with its unit, plain
/// for ordinary magnitudes, in scientific notation for tiny or huge ones.
pub fn residual_text(force: f64, moment: Option<f64>) -> String {
    let plain = |x: f64| {
        if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
            format!("{}", (x * 1e4).round() / 1e4)
        } else {
            format!("{x:.3e}")
        }
    };
    match moment {
        Some(m) => format!("{} N (force), {} N·m (moment)", plain(force), plain(m)),
        None => format!("{} N (force)", plain(force)),
    }
}

/// Where the rest lengths of an elastic equilibrium come from.
#[derive(Debug, Clone, PartialEq)]
pub enum RestLengths {
    /// Given, m, one per cable.
    Given(Vec<f64>),
    /// The IK lengths at a pose: how far the platform sags from it.
    SagAt(Pose),
    /// L0 = IK(pose) − f*/k, f* the tension distribution within the bounds at the pose: the
    /// platform settles exactly there.
    PretensionedAt(Pose, TensionBounds),
}

/// An elastic equilibrium, as `cdpr equilibrium` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EquilibriumReport {
    pub robot: String,
    /// Angles in the unit asked for.
    pub pose: [f64; 6],
    pub tensions: Vec<f64>,
    pub rest_lengths: Vec<f64>,
    /// ‖W f + w_g‖ over the controlled rows (N and N·m mixed: see the parts below).
    pub residual: f64,
    /// ‖force rows of W f + w_g‖, N.
    pub residual_force: f64,
    /// ‖moment rows of W f + w_g‖, N·m (None for a 3-DOF robot).
    pub residual_moment: Option<f64>,
    pub iterations: usize,
    /// The pose the rest lengths were derived from, if any.
    pub target: Option<[f64; 6]>,
    /// Equilibrium − target: m, and angles (wrapped) in the unit asked for.
    pub displacement: Option<[f64; 6]>,
    /// Cables with mass only: `tensions` are the platform-end tensions, these the exit-end
    /// (pulley side) ones, N.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_tensions: Option<Vec<f64>>,
    /// Cables with mass only: each cable's sag below its chord, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sags: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Where elastic cables of the given rest lengths hold the platform. The search starts at
/// `guess`, else at the target pose of `rest`, else where the unstretched cables reach.
pub fn equilibrium_report(
    robot: &Robot,
    rest: &RestLengths,
    guess: Option<Pose>,
    unit: AngleUnit,
) -> Result<EquilibriumReport, StaticsError> {
    let mut warnings = Vec::new();
    let (lengths, target) = match rest {
        RestLengths::Given(l0) => (l0.clone(), None),
        RestLengths::SagAt(pose) => {
            let pose = effective_pose(robot, pose);
            warnings.extend(pose_warnings(robot, &pose, "pose"));
            (kinematics::lengths(robot, &pose), Some(pose))
        }
        RestLengths::PretensionedAt(pose, bounds) => {
            let pose = effective_pose(robot, pose);
            warnings.extend(pose_warnings(robot, &pose, "pose"));
            let l0 = if robot.has_cable_mass() {
                super::heavy::catenary_rest_lengths(robot, &pose, *bounds)?.rest_lengths
            } else {
                pretensioned_rest_lengths(robot, &pose, *bounds)?.0
            };
            (l0, Some(pose))
        }
    };
    let options = EquilibriumOptions {
        guess: guess.or(target),
        ..EquilibriumOptions::default()
    };
    let mut eq = elastic_equilibrium(robot, &lengths, &options)?;
    let mut heavy = None;
    if robot.has_cable_mass() {
        let h = super::heavy::heavy_equilibrium(robot, &lengths, &options)?;
        eq.pose = h.pose;
        eq.tensions = h.tensions.clone();
        eq.iterations += h.iterations;
        heavy = Some(h);
    }
    let displacement = target.map(|t| {
        let (p, q) = (eq.pose.to_array(), t.to_array());
        std::array::from_fn(|k| {
            if k < 3 {
                p[k] - q[k]
            } else {
                unit.from_rad(wrap_angle(p[k] - q[k]))
            }
        })
    });
    let (residual_force, residual_moment) = match &heavy {
        Some(h) => {
            // The catenary forces at the equilibrium, summed with the platform's weight.
            let rotation = h.pose.rotation();
            let weight = robot.platform.mass * crate::robot::GRAVITY;
            let com = rotation * robot.platform.com;
            let mut force = nalgebra::Vector3::new(0.0, 0.0, -weight);
            let mut moment = com.cross(&force);
            let forces = super::heavy::cable_forces(robot, &lengths, &h.pose);
            for ((f, _), cable) in forces.iter().zip(&robot.cables) {
                force += f;
                moment += (rotation * cable.platform_anchor).cross(f);
            }
            let six = robot.dof.count() == 6;
            eq.residual = if six {
                (force.norm_squared() + moment.norm_squared()).sqrt()
            } else {
                force.norm()
            };
            (force.norm(), six.then(|| moment.norm()))
        }
        None => residual_parts(robot, &eq.pose, &eq.tensions),
    };
    Ok(EquilibriumReport {
        robot: robot.name.clone(),
        pose: unit.pose(&eq.pose),
        tensions: eq.tensions,
        rest_lengths: eq.rest_lengths,
        residual: eq.residual,
        residual_force,
        residual_moment,
        iterations: eq.iterations,
        target: target.map(|t| unit.pose(&t)),
        displacement,
        exit_tensions: heavy.as_ref().map(|h| h.exit_tensions.clone()),
        sags: heavy.as_ref().map(|h| h.sags.clone()),
        warnings,
    })
}

/// A cable robot at its home pose, as `cdpr check` summarises it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HomeReport {
    /// Cable lengths at home, m.
    pub lengths: Vec<f64>,
    /// The tension distribution at home within the file's bounds, N; None when infeasible.
    pub tensions: Option<Vec<f64>>,
}

/// Lengths and tensions of `robot` at its home pose.
pub fn home_report(robot: &Robot) -> HomeReport {
    let home = Pose::from_array(robot.home);
    let d = super::tension_distribution(robot, &home, robot.tension);
    HomeReport {
        lengths: kinematics::lengths(robot, &home),
        tensions: d.feasible.then_some(d.tensions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_report_holds_the_weight_with_the_ik_lengths() {
        let robot = crate::fixtures::robot("caroca");
        let home = home_report(&robot);
        let pose = Pose::from_array(robot.home);
        let ik = kinematics::inverse(&robot, &pose);
        assert_eq!(home.lengths, ik.lengths());
        let f = home.tensions.expect("caroca holds its platform at home");
        // Statics by hand: the vertical components carry the weight.
        let up: f64 = f.iter().zip(ik.directions()).map(|(f, d)| f * d.z).sum();
        let weight = robot.platform.mass * 9.81;
        assert!((up - weight).abs() < 1e-6 * weight, "{up} vs {weight}");
    }

    #[test]
    fn bounds_are_overridden_and_checked() {
        let robot = crate::fixtures::robot("caroca");
        let b = tension_bounds(&robot, Some(10.0), None).expect("valid");
        assert_eq!((b.min, b.max), (10.0, robot.tension.max));
        for (min, max) in [
            (-1.0, 10.0),
            (5.0, 5.0),
            (0.0, f64::INFINITY),
            (f64::NAN, 1.0),
        ] {
            let e = tension_bounds(&robot, Some(min), Some(max)).expect_err("invalid");
            assert!(e.to_string().contains("0 ≤ `f_min` < `f_max`"), "{e}");
        }
    }

    #[test]
    fn the_vertical_tension_components_carry_the_weight_and_infeasible_bounds_say_so() {
        // silva4 (3 DOF) at the centre of its workspace box: statics alone says the vertical
        // components of the tensions carry the weight, Σ f_i d_iz = m g (d_i the unit cable
        // vectors, computed here from the IK), whatever distribution is chosen.
        let robot = crate::fixtures::robot("silva4");
        let lo = robot.workspace.min;
        let hi = robot.workspace.max;
        let centre = Pose::new(
            (lo.x + hi.x) / 2.0,
            (lo.y + hi.y) / 2.0,
            robot.home[2],
            0.0,
            0.0,
            0.0,
        );
        let report = tensions_report(&robot, &centre, robot.tension, AngleUnit::Rad);
        assert!(report.feasible, "{:?}", report.verdict());
        assert_eq!(report.verdict(), None);
        let ik = kinematics::inverse(&robot, &centre);
        let total: f64 = report
            .tensions
            .iter()
            .zip(ik.directions())
            .map(|(f, d)| f * d.z)
            .sum();
        assert!(
            (total - robot.platform.mass * 9.81).abs() < 1e-6 * robot.platform.mass * 9.81,
            "Σ f d_z = {total} N"
        );
        assert!(
            report
                .tensions
                .iter()
                .all(|f| *f >= robot.tension.min - 1e-9)
        );
        // An impossible upper bound: the verdict says no tensions hold the platform.
        let tight = TensionBounds {
            min: 0.0,
            max: 1e-3,
        };
        let report = tensions_report(&robot, &centre, tight, AngleUnit::Rad);
        assert!(!report.feasible);
        assert!(
            report
                .verdict()
                .expect("infeasible")
                .starts_with("infeasible")
        );
    }

    #[test]
    fn pretensioned_rest_lengths_land_the_platform_on_its_target() {
        let robot = crate::fixtures::robot("caroca");
        let target = Pose::new(0.0, 0.0, 1.5, 0.0, 0.0, 0.0);
        let rest = RestLengths::PretensionedAt(target, robot.tension);
        let report = equilibrium_report(&robot, &rest, None, AngleUnit::Deg).expect("solves");
        let d = report.displacement.expect("a target");
        assert!(d.iter().all(|x| x.abs() < 1e-6), "{d:?}");
        assert_eq!(report.target, Some([0.0, 0.0, 1.5, 0.0, 0.0, 0.0]));
        // Sagging from the IK lengths: the platform drops (dz < 0), it does not rise.
        let sag = equilibrium_report(&robot, &RestLengths::SagAt(target), None, AngleUnit::Rad)
            .expect("solves");
        assert!(sag.displacement.expect("a target")[2] < 0.0);
    }
}
