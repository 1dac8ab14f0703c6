//! Test suites of a PLC's code against the shadow as its plant: a suite file's scenarios, each a
//! robot, a PLC (the virtual PLC playing a trajectory, or a real one's address), the physics
//! and link options, and what the run must show ([`Expectations`], [`Condition`]s on the
//! PLC's symbols). [`spec`] reads and checks a suite file, every error located as
//! `file:line: field: message`.

pub mod expect;
pub mod spec;

pub use expect::{EXPECT_OPTIONS, Expectations};
pub use spec::{Condition, Op, PlcTarget, Scenario, Suite, SuiteError, When};
