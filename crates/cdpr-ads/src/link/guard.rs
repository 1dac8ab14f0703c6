//! The command guard: a plausibility check on the commanded lengths of each sample.

use super::controller::CycleInputs;
use cdpr_core::robot::Winch;

/// Rejects commanded-length samples that jump further than the winches can move, holding
/// the last good sample (the "physically absurd" values). It keeps the one copy of
/// the last good sample there is: samples are moved in, and a refused one is handed back.
#[derive(Debug, Clone)]
pub struct CommandGuard {
    max_velocity: f64,
    /// Extra allowance for timing jitter between controller and shadow, m.
    slack: f64,
    last_good: Option<CycleInputs>,
    pub rejected: u64,
}

/// Why a sample was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "cable {cable}: commanded length jumped {} m, at most {} m is possible",
    metres(*jump_m),
    metres(*allowed_m)
)]
pub struct Rejection {
    /// 1-based.
    pub cable: usize,
    pub jump_m: f64,
    pub allowed_m: f64,
}

/// A length in a message: to the µm where it is a length at all, else as `1e305` rather than
/// a 306-digit number (a PLC may send anything).
fn metres(x: f64) -> String {
    if x.abs() < 1e5 {
        format!("{x:.6}")
    } else {
        cdpr_core::text::Plain(x).to_string()
    }
}

/// A refused sample, handed back with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub rejection: Rejection,
    /// Boxed: a refusal is rare, the result of every check small.
    pub sample: Box<CycleInputs>,
}

impl CommandGuard {
    /// `slack`: m allowed on top of v_max·dt (e.g. 1 mm).
    pub fn new(winch: &Winch, slack: f64) -> CommandGuard {
        CommandGuard {
            max_velocity: winch.max_velocity,
            slack,
            last_good: None,
            rejected: 0,
        }
    }

    /// Accepts `sample` if no cable moved more than v_max·dt + slack since the last accepted
    /// one (`dt` in s): it becomes the last good one. On rejection the last good sample stays
    /// the one to use, and `sample` comes back with the reason.
    pub fn check(&mut self, sample: CycleInputs, dt: f64) -> Result<&CycleInputs, Refused> {
        if let Some(prev) = &self.last_good {
            let allowed = self.max_velocity * dt.max(0.0) + self.slack;
            for (cable, (a, b)) in prev
                .commanded_lengths
                .iter()
                .zip(&sample.commanded_lengths)
                .enumerate()
            {
                let jump = (b - a).abs();
                if jump > allowed {
                    self.rejected += 1;
                    return Err(Refused {
                        rejection: Rejection {
                            cable: cable + 1,
                            jump_m: jump,
                            allowed_m: allowed,
                        },
                        sample: Box::new(sample),
                    });
                }
            }
        }
        Ok(self.last_good.insert(sample))
    }

    /// The last accepted sample.
    pub fn last_good(&self) -> Option<&CycleInputs> {
        self.last_good.as_ref()
    }
}

#[cfg(test)]
mod message_tests {
    #[test]
    fn an_absurd_jump_is_written_in_a_few_characters() {
        let r = super::Rejection {
            cable: 3,
            jump_m: 1e305,
            allowed_m: 0.0026,
        };
        assert_eq!(
            r.to_string(),
            "cable 3: commanded length jumped 1e305 m, at most 0.002600 m is possible"
        );
    }
}
