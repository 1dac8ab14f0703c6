//! The fit: Levenberg–Marquardt (the `levenberg-marquardt` crate, MINPACK's algorithm) on
//! the weighted residuals of [`super::model`], in scaled parameters (each quantity in units of
//! its file value, or of 1 mm and 1 % of the rated torque for the anchors, payout offsets and
//! torque offsets, which start at values near 0); the anchors and payout offsets bounded
//! within ±[`GEOMETRY_BOUND`] of the file by a tanh map. Before fitting, the parameters the
//! recording does not excite — whose standard error at the start would exceed a tenth of their
//! value (1 mm, 1 % of rated for the bounded and offset ones) — are named and left as the file
//! has them, one at a time, the worst first, so that nothing is fitted to noise; the weights
//! of the residual groups (each drive's torque, the wrench's force and moment rows) are then
//! set from a first fit's residuals and the fit repeated, so that the standard errors come
//! from the data's own noise.

use super::model::{
    CableAt, CableValues, GEOMETRY_BOUND, Group, Moment, QUANTITIES, Quantity, Samples, cable_at,
    robot_with, values_of,
};
use crate::robot::Robot;
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::Serialize;

/// Why a calibration cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("nothing to fit: no group asked for (drives, stiffness, geometry)")]
    NothingToFit,
    #[error("`drives` asked for, but robot {robot} has no drives (no [winch] drum_radius …)")]
    NoDrives { robot: String },
    #[error(
        "the recording has {samples} usable samples after smoothing; the fit of {parameters} \
         parameters needs at least {needed}"
    )]
    TooShort {
        samples: usize,
        parameters: usize,
        needed: usize,
    },
    #[error("the recording has {found} cables' {what}, robot {robot} has {expected}")]
    Cables {
        what: &'static str,
        robot: String,
        found: usize,
        expected: usize,
    },
    #[error("the recording's {what} hold {found} values, its times say {expected}")]
    Shape {
        what: &'static str,
        found: usize,
        expected: usize,
    },
    #[error("the recording's times do not advance (fewer than two samples, or a step ≤ 0)")]
    NoStep,
    #[error("none of the parameters asked for is excited by the recording: {names}")]
    NothingExcited { names: String },
}

/// One fitted parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// 0-based cable, and its name.
    pub cable: usize,
    pub cable_name: String,
    pub quantity: Quantity,
    pub unit: &'static str,
    /// The file's value (0 for the offsets) and the fitted one, SI.
    pub start: f64,
    pub value: f64,
    /// The standard error of `value`, SI (from the weighted Jacobian at the solution and the
    /// residuals' own spread).
    pub std_error: f64,
}

/// A parameter the recording does not excite: left at the file's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unexcited {
    pub cable: usize,
    pub cable_name: String,
    pub quantity: Quantity,
    /// The standard error it would have had, SI, against the largest one trusted.
    pub std_error: f64,
    pub trusted: f64,
}

/// A pair of fitted parameters whose estimates are strongly correlated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Correlation {
    pub first: (usize, Quantity),
    pub second: (usize, Quantity),
    pub coefficient: f64,
}

/// RMS of the residuals, unweighted: per drive the torque (N·m); the wrench's force (N) and
/// moment (N·m) rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residuals {
    pub torque: Vec<f64>,
    pub force: f64,
    pub moment: f64,
}

/// What a calibration found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub parameters: Vec<Estimate>,
    pub not_excited: Vec<Unexcited>,
    /// |ρ| ≥ [`STRONG_CORRELATION`].
    pub correlations: Vec<Correlation>,
    pub before: Residuals,
    pub after: Residuals,
    /// Samples used, and the solver's evaluations and why it stopped.
    pub samples: usize,
    pub evaluations: usize,
    pub termination: String,
    /// Every cable's values after the fit (the unfitted ones the file's), SI.
    #[serde(skip)]
    pub values: Vec<CableValues>,
}

impl Calibration {
    /// The robot with the fitted values.
    pub fn robot(&self, robot: &Robot) -> Robot {
        robot_with(robot, &self.values)
    }

    /// The estimate of `quantity` of cable `cable`, when it was fitted.
    pub fn estimate(&self, cable: usize, quantity: Quantity) -> Option<&Estimate> {
        self.parameters
            .iter()
            .find(|e| e.cable == cable && e.quantity == quantity)
    }
}

/// Correlations reported from this |ρ| up.
pub const STRONG_CORRELATION: f64 = 0.9;

/// The largest standard error trusted, in scaled units (see the module's doc).
fn trusted(q: Quantity) -> f64 {
    match q {
        Quantity::RotorInertia
        | Quantity::ViscousFriction
        | Quantity::CoulombFriction
        | Quantity::Stiffness => 0.1,
        _ => 1.0,
    }
}

/// Calibrates `robot`'s `groups` on `samples`.
pub fn calibrate(
    robot: &Robot,
    samples: &Samples,
    groups: &[Group],
) -> Result<Calibration, CalibrationError> {
    if groups.is_empty() {
        return Err(CalibrationError::NothingToFit);
    }
    if groups.contains(&Group::Drives) && !robot.has_drives() {
        return Err(CalibrationError::NoDrives {
            robot: robot.name.clone(),
        });
    }
    if samples.cables != robot.cables.len() {
        return Err(CalibrationError::Cables {
            what: "payouts",
            robot: robot.name.clone(),
            found: samples.cables,
            expected: robot.cables.len(),
        });
    }
    let start = values_of(robot);
    let mut free: Vec<(usize, Quantity)> = (0..robot.cables.len())
        .flat_map(|i| QUANTITIES.iter().map(move |&q| (i, q)))
        .filter(|&(i, q)| {
            groups.contains(&q.group()) && (q.group() != Group::Drives || i < robot.drives.len())
        })
        .collect();
    let rows = robot.drives.len() + robot.dof.count();
    let needed = 2 * free.len() / rows.max(1) + 10;
    if samples.len() < needed {
        return Err(CalibrationError::TooShort {
            samples: samples.len(),
            parameters: free.len(),
            needed,
        });
    }
    let moments: Vec<Moment> = (0..samples.len())
        .map(|n| Moment::of(robot, samples, n))
        .collect();
    let mut problem = Problem::new(robot, samples, &moments, start.clone(), free.clone());
    let before = problem.residual_rms();
    problem.set_weights(&before);

    // Everything asked for fitted, the weights set from that fit's residuals (the data's own
    // noise, once the model fits) and the fit repeated from there.
    let solver = LevenbergMarquardt::new().with_patience(50);
    let mut evaluations = 0;
    let (mut problem, report) = solver.minimize(problem);
    evaluations += report.number_of_evaluations;
    problem.set_weights(&problem.residual_rms());
    let (mut problem, mut report) = solver.minimize(problem);
    evaluations += report.number_of_evaluations;

    // The parameters the recording does not excite, the worst first (the normal matrix at
    // that solution, a parameter's row and column dropped at a time): back to the file's
    // value, the rest fitted again.
    let jac = problem.weighted_jacobian();
    let variance = residual_variance(&problem, &jac);
    let normal = jac.tr_mul(&jac) / variance;
    let mut kept: Vec<usize> = (0..free.len()).collect();
    let mut not_excited = Vec::new();
    while !kept.is_empty() {
        let covariance = inverse(normal.select_rows(&kept).select_columns(&kept));
        let (at, ratio) = (0..kept.len())
            .map(|k| {
                let j = kept[k];
                // Both in scaled units.
                let ratio = covariance[(k, k)].max(0.0).sqrt() / trusted(free[j].1);
                (k, if ratio.is_nan() { f64::INFINITY } else { ratio })
            })
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        if ratio <= 1.0 {
            break;
        }
        let j = kept.remove(at);
        let (cable, quantity) = free[j];
        let scale = problem.scales[j];
        not_excited.push(Unexcited {
            cable,
            cable_name: robot.cables[cable].name.clone(),
            quantity,
            std_error: ratio * trusted(quantity) * scale,
            trusted: trusted(quantity) * scale,
        });
    }
    if kept.is_empty() {
        let names = not_excited
            .iter()
            .map(|u| format!("{} of {}", u.quantity.name(), u.cable_name))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(CalibrationError::NothingExcited { names });
    }
    if kept.len() < free.len() {
        let x: Vec<f64> = kept.iter().map(|&j| problem.x[j]).collect();
        let weights = problem.residual_rms();
        free = kept.iter().map(|&j| free[j]).collect();
        problem = Problem::new(robot, samples, &moments, start.clone(), free.clone());
        problem.x = DVector::from_vec(x);
        problem.set_weights(&weights);
        (problem, report) = solver.minimize(problem);
        evaluations += report.number_of_evaluations;
    }
    let after = problem.residual_rms();

    let jac = problem.weighted_jacobian();
    let variance = residual_variance(&problem, &jac);
    let covariance = covariance(&jac);
    let values = problem.values();
    let parameters = free
        .iter()
        .enumerate()
        .map(|(j, &(cable, quantity))| {
            let derivative = problem.derivative(j);
            Estimate {
                cable,
                cable_name: robot.cables[cable].name.clone(),
                quantity,
                unit: quantity.unit(&robot.cables[cable].stiffness),
                start: start[cable][quantity.index()],
                value: values[cable][quantity.index()],
                std_error: (covariance[(j, j)].max(0.0) * variance).sqrt() * derivative.abs(),
            }
        })
        .collect();
    let mut correlations = Vec::new();
    for a in 0..free.len() {
        for b in a + 1..free.len() {
            let c = covariance[(a, b)] / (covariance[(a, a)] * covariance[(b, b)]).sqrt();
            if c.abs() >= STRONG_CORRELATION {
                correlations.push(Correlation {
                    first: free[a],
                    second: free[b],
                    coefficient: c,
                });
            }
        }
    }
    Ok(Calibration {
        parameters,
        not_excited,
        correlations,
        before,
        after,
        samples: samples.len(),
        evaluations,
        termination: format!("{:?}", report.termination),
        values,
    })
}

/// The weighted residuals' variance per degree of freedom (1 when the weights are the noise's).
fn residual_variance(problem: &Problem, jac: &DMatrix<f64>) -> f64 {
    let dof = (jac.nrows().saturating_sub(jac.ncols())).max(1) as f64;
    problem.weighted_residuals().norm_squared() / dof
}

/// (JᵀJ)⁻¹ of a weighted Jacobian, with a ridge of 1e-12 of its trace so that a direction the
/// data does not see comes out with a huge variance rather than failing.
fn covariance(jac: &DMatrix<f64>) -> DMatrix<f64> {
    inverse(jac.tr_mul(jac))
}

/// The inverse of a normal matrix (see [`covariance`]).
fn inverse(mut normal: DMatrix<f64>) -> DMatrix<f64> {
    let n = normal.nrows();
    let ridge = 1e-12 * normal.trace().max(f64::MIN_POSITIVE) / n.max(1) as f64;
    for k in 0..n {
        normal[(k, k)] += ridge;
    }
    normal
        .cholesky()
        .map(|c| c.inverse())
        .unwrap_or_else(|| DMatrix::from_diagonal_element(n, n, f64::INFINITY))
}

/// The fit's least-squares problem.
struct Problem<'a> {
    robot: &'a Robot,
    samples: &'a Samples,
    moments: &'a [Moment],
    start: Vec<CableValues>,
    free: Vec<(usize, Quantity)>,
    /// Per free parameter its scale (SI per scaled unit) and its scaled value.
    scales: Vec<f64>,
    x: DVector<f64>,
    /// 1/σ of each drive's torque rows, of the force rows and of the moment rows.
    torque_weights: Vec<f64>,
    force_weight: f64,
    moment_weight: f64,
}

impl<'a> Problem<'a> {
    fn new(
        robot: &'a Robot,
        samples: &'a Samples,
        moments: &'a [Moment],
        start: Vec<CableValues>,
        free: Vec<(usize, Quantity)>,
    ) -> Problem<'a> {
        let scales = free
            .iter()
            .map(|&(i, q)| {
                let v = start[i][q.index()].abs();
                let rated = robot
                    .drives
                    .get(i)
                    .map_or(1.0, |d| d.rated_torque.max(1e-6));
                match q {
                    Quantity::RotorInertia => v.max(1e-9),
                    Quantity::ViscousFriction => v.max(1e-3 * rated / 100.0),
                    Quantity::CoulombFriction => v.max(1e-2 * rated),
                    Quantity::TorqueOffset => 1e-2 * rated,
                    Quantity::Stiffness => v.max(1.0),
                    _ => 1e-3,
                }
            })
            .collect();
        let n = free.len();
        Problem {
            robot,
            samples,
            moments,
            start,
            free,
            scales,
            x: DVector::zeros(n),
            torque_weights: vec![1.0; robot.drives.len()],
            force_weight: 1.0,
            moment_weight: 1.0,
        }
    }

    /// Weights from residual RMS values (each floored far below any noise, so that an exact
    /// fit does not divide by zero).
    fn set_weights(&mut self, rms: &Residuals) {
        let inv = |r: f64, least: f64| 1.0 / r.max(least);
        self.torque_weights = rms
            .torque
            .iter()
            .zip(&self.robot.drives)
            .map(|(&r, d)| inv(r, 1e-6 * d.rated_torque.max(1e-6)))
            .collect();
        self.force_weight = inv(rms.force, 1e-6);
        self.moment_weight = inv(rms.moment, 1e-7);
    }

    /// The SI value of free parameter `j` at scaled `x`, and its derivative.
    fn value_of(&self, j: usize, x: f64) -> (f64, f64) {
        let (i, q) = self.free[j];
        let v0 = self.start[i][q.index()];
        let s = self.scales[j];
        if q.bounded() {
            let t = (s * x / GEOMETRY_BOUND).tanh();
            (v0 + GEOMETRY_BOUND * t, s * (1.0 - t * t))
        } else {
            (v0 + s * x, s)
        }
    }

    fn derivative(&self, j: usize) -> f64 {
        self.value_of(j, self.x[j]).1
    }

    fn values(&self) -> Vec<CableValues> {
        let mut v = self.start.clone();
        for (j, &(i, q)) in self.free.iter().enumerate() {
            v[i][q.index()] = self.value_of(j, self.x[j]).0;
        }
        v
    }

    fn rows(&self) -> usize {
        self.robot.drives.len() + self.robot.dof.count()
    }

    /// Each cable at sample `n` under `values`.
    fn cable(&self, values: &[CableValues], n: usize, i: usize) -> CableAt {
        let s = self.samples;
        cable_at(
            &self.robot.cables[i],
            self.robot.drives.get(i),
            &values[i],
            &self.moments[n],
            &s.payouts[n * s.cables + i],
            s.friction
                .get(n * self.robot.drives.len() + i)
                .copied()
                .unwrap_or(0.0),
        )
    }

    /// The unweighted residuals at sample `n`: torques, then the wrench rows.
    fn sample_residuals(&self, values: &[CableValues], n: usize, out: &mut [f64]) {
        let drives = self.robot.drives.len();
        let dof = self.robot.dof.count();
        let mut wrench = [0.0; 6];
        let measured = &self.samples.torques[n * drives..(n + 1) * drives];
        for i in 0..self.robot.cables.len() {
            let c = self.cable(values, n, i);
            if let (Some(o), Some(m)) = (out.get_mut(i).filter(|_| i < drives), measured.get(i)) {
                *o = c.torque - m;
            }
            for (w, cw) in wrench.iter_mut().zip(&c.wrench) {
                *w += cw;
            }
        }
        for ((o, w), needed) in out[drives..drives + dof]
            .iter_mut()
            .zip(&wrench)
            .zip(&self.moments[n].needed)
        {
            *o = w - needed;
        }
    }

    fn weight(&self, row: usize) -> f64 {
        let drives = self.robot.drives.len();
        if row < drives {
            self.torque_weights[row]
        } else if row < drives + 3 {
            self.force_weight
        } else {
            self.moment_weight
        }
    }

    fn weighted_residuals(&self) -> DVector<f64> {
        let values = self.values();
        let rows = self.rows();
        let mut r = DVector::zeros(rows * self.samples.len());
        for n in 0..self.samples.len() {
            let out = &mut r.as_mut_slice()[n * rows..(n + 1) * rows];
            self.sample_residuals(&values, n, out);
            for (k, x) in out.iter_mut().enumerate() {
                *x *= self.weight(k);
            }
        }
        r
    }

    fn residual_rms(&self) -> Residuals {
        let values = self.values();
        let drives = self.robot.drives.len();
        let rows = self.rows();
        let mut sums = vec![0.0; rows];
        let mut out = vec![0.0; rows];
        for n in 0..self.samples.len() {
            self.sample_residuals(&values, n, &mut out);
            for (s, r) in sums.iter_mut().zip(&out) {
                *s += r * r;
            }
        }
        let count = self.samples.len().max(1) as f64;
        let rms = |range: std::ops::Range<usize>| {
            let len = range.len().max(1) as f64;
            (sums[range].iter().sum::<f64>() / (count * len)).sqrt()
        };
        let dof = self.robot.dof.count();
        Residuals {
            torque: (0..drives).map(|i| (sums[i] / count).sqrt()).collect(),
            force: rms(drives..drives + dof.min(3)),
            moment: if dof > 3 {
                rms(drives + 3..drives + dof)
            } else {
                0.0
            },
        }
    }

    /// ∂(weighted residuals)/∂x: the drives' terms exact (the torque is linear in them), the
    /// rest by central differences of one cable's model (a parameter of cable i moves only
    /// its torque and the wrench).
    fn weighted_jacobian(&self) -> DMatrix<f64> {
        let values = self.values();
        let rows = self.rows();
        let drives = self.robot.drives.len();
        let dof = self.robot.dof.count();
        let mut jac = DMatrix::zeros(rows * self.samples.len(), self.free.len());
        let derivatives: Vec<f64> = (0..self.free.len()).map(|j| self.derivative(j)).collect();
        for n in 0..self.samples.len() {
            // The drives' regressors of each cable at this sample, evaluated once for its
            // four drive parameters.
            let mut regressors: Vec<Option<[f64; 4]>> = vec![None; self.robot.cables.len()];
            for (j, &(i, q)) in self.free.iter().enumerate() {
                let row0 = n * rows;
                let dv = derivatives[j];
                if q.group() == Group::Drives {
                    let terms =
                        *regressors[i].get_or_insert_with(|| self.cable(&values, n, i).drive_terms);
                    jac[(row0 + i, j)] = terms[q.index()] * dv * self.weight(i);
                    continue;
                }
                let step = 1e-4 * self.scales[j];
                let mut plus = values[i];
                let mut minus = values[i];
                plus[q.index()] += step;
                minus[q.index()] -= step;
                let (s, m) = (&self.samples, &self.moments[n]);
                let (cable, drive) = (&self.robot.cables[i], self.robot.drives.get(i));
                let payout = &s.payouts[n * s.cables + i];
                let friction = s.friction.get(n * drives + i).copied().unwrap_or(0.0);
                let a = cable_at(cable, drive, &plus, m, payout, friction);
                let b = cable_at(cable, drive, &minus, m, payout, friction);
                let scale = dv / (2.0 * step);
                if i < drives {
                    jac[(row0 + i, j)] = (a.torque - b.torque) * scale * self.weight(i);
                }
                for r in 0..dof {
                    jac[(row0 + drives + r, j)] =
                        (a.wrench[r] - b.wrench[r]) * scale * self.weight(drives + r);
                }
            }
        }
        jac
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let r = self.weighted_residuals();
        r.iter().all(|x| x.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let j = self.weighted_jacobian();
        j.iter().all(|x| x.is_finite()).then_some(j)
    }
}
