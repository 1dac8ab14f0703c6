//! The controller's commands as the guard lets them through.
//!
//! One copy of each sample and no more: the last good one, held by the [`CommandGuard`] (its
//! lengths are the goal the physics follows), and — while the last sample read was refused —
//! that one, as the controller sent it. Samples are moved, never cloned.

use crate::link::{CommandGuard, CycleInputs, Refused, Rejection};
use cdpr_core::robot::Winch;

pub(super) struct Commands {
    guard: CommandGuard,
    /// The last sample read, when the guard refused it.
    refused: Option<CycleInputs>,
    /// Shadow time at which the last good sample was read, s.
    good_time: f64,
}

impl Commands {
    /// The guard for `winch` with `slack` (m), `first` the baseline (read at shadow time
    /// `time`): it has nothing to jump from.
    pub(super) fn new(winch: &Winch, slack: f64, first: CycleInputs, time: f64) -> Commands {
        let mut guard = CommandGuard::new(winch, slack);
        let _ = guard.check(first, 0.0);
        Commands {
            guard,
            refused: None,
            good_time: time,
        }
    }

    /// Admits `sample`, read at shadow time `time`, if no cable moved further than the
    /// winches can in `dt` s since the last good one; else keeps it as the refused one.
    pub(super) fn admit(
        &mut self,
        sample: CycleInputs,
        dt: f64,
        time: f64,
    ) -> Result<&CycleInputs, Rejection> {
        match self.guard.check(sample, dt) {
            Ok(good) => {
                self.refused = None;
                self.good_time = time;
                Ok(good)
            }
            Err(Refused { rejection, sample }) => {
                self.refused = Some(sample);
                Err(rejection)
            }
        }
    }

    /// The last good sample: its lengths are where the physics is going.
    pub(super) fn good(&self) -> &CycleInputs {
        self.guard
            .last_good()
            .expect("the guard is made with a baseline sample")
    }

    /// The last sample read, refused or not.
    pub(super) fn last_read(&self) -> &CycleInputs {
        self.refused.as_ref().unwrap_or_else(|| self.good())
    }

    /// Shadow time at which the last good sample was read, s.
    pub(super) fn good_time(&self) -> f64 {
        self.good_time
    }
}
