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
    /// The last sample read had values that cannot be used.
    unusable: bool,
    /// Shadow time at which the last good sample was read, s.
    good_time: f64,
    /// Its place on the commands' time line, s.
    good_line: f64,
}

impl Commands {
    /// The guard for `winch` with `slack` (m), `first` the baseline (read at shadow time
    /// `time`, at `line` on the time line): it has nothing to jump from.
    pub(super) fn new(
        winch: &Winch,
        slack: f64,
        first: CycleInputs,
        time: f64,
        line: f64,
    ) -> Commands {
        let mut guard = CommandGuard::new(winch, slack);
        let _ = guard.check(first, 0.0);
        Commands {
            guard,
            refused: None,
            unusable: false,
            good_time: time,
            good_line: line,
        }
    }

    /// Admits `sample`, read at shadow time `time` and placed at `line` on the time line, if
    /// no cable moved further than the winches can in `dt` s since the last good one; else
    /// keeps it as the refused one.
    pub(super) fn admit(
        &mut self,
        sample: CycleInputs,
        dt: f64,
        (time, line): (f64, f64),
    ) -> Result<&CycleInputs, Rejection> {
        match self.guard.check(sample, dt) {
            Ok(good) => {
                self.refused = None;
                self.unusable = false;
                self.good_time = time;
                self.good_line = line;
                Ok(good)
            }
            Err(Refused { rejection, sample }) => {
                self.refused = Some(*sample);
                self.unusable = false;
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

    /// The last good sample's place on the time line, s.
    pub(super) fn good_line(&self) -> f64 {
        self.good_line
    }

    /// Whether the last sample read was refused (the last good one is held).
    pub(super) fn holding(&self) -> bool {
        self.refused.is_some() || self.unusable
    }

    /// The last sample read could not be used at all (a NaN or an infinity in it): the last
    /// good one is held until a good one comes.
    pub(super) fn refuse_unusable(&mut self) {
        self.unusable = true;
    }
}
