//! Test suites of a PLC's code against the shadow as its plant (`cdpr test`): a suite file's
//! scenarios, each a robot, a PLC (the virtual PLC playing a trajectory, or a real one's
//! address), the physics and link options, and what the run must show ([`Expectations`],
//! [`Condition`]s on the PLC's symbols). [`spec`] reads and checks a suite file, every error
//! located as `file:line: field: message`; [`run`] runs its scenarios; [`verdict`] judges
//! each run; [`junit`] and [`report`] write the results for CI servers and for people.

pub mod expect;
pub mod junit;
pub mod report;
pub mod run;
pub mod spec;
pub mod verdict;
pub mod watch;

pub use expect::{EXPECT_OPTIONS, Expectations};
pub use run::{RunSettings, ScenarioResult, ScenarioRun, SuiteReport, run_suite};
pub use spec::{Condition, Op, PlcTarget, Scenario, Suite, SuiteError, When};
pub use verdict::Verdict;
