//! Seed 004's identification: the surrogate's filters fitted to reference responses and
//! validated on others (`cdpr surrogate fit|validate`). The references are recorded CSVs or
//! runs of the physics core on the identification signals ([`reference`]); the sessions
//! resolve names and options and produce the reports the command prints ([`session`]). The
//! filters themselves, their fit and their parameter files are [`crate::surrogate`], below the
//! physics.

pub mod reference;
pub mod session;

pub use reference::SurrogateError;
