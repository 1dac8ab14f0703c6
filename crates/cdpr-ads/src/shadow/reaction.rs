//! The reaction time as the PLC measures it (seed 003, section 4.2), counted by the shadow from
//! the PLC's own diagnostic.
//!
//! `nReactionCycles` is nCycle − nShadowCycle at the cycle a new echo arrived, and it keeps that
//! value until the next one comes (`assets/twincat/README.md`; the virtual PLC alike). Every
//! sample carries it, so counting every sample would weigh an echo by how long it stood and
//! count a value read twice twice. The figure r on the sample of counter c was set at a cycle
//! c₀ after the sample seen before it (counter p) and at most c, for the echo c₀ − r: the shadow
//! counts r once, for the newest echo e it wrote and has not counted yet with p < e + r ≤ c —
//! one count per echo the PLC took, as the PLC counts them, also when the shadow sees only
//! some of the PLC's cycles (polled) — and forgets the echoes before it (the PLC never took
//! those).

use std::collections::VecDeque;

/// The echoes written and not yet seen taken, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Echoes {
    written: VecDeque<u32>,
    /// The last echo written.
    last: Option<u32>,
}

/// Echoes remembered: far more than the PLC leaves unread at any period.
const KEPT: usize = 256;

impl Echoes {
    pub fn clear(&mut self) {
        self.written.clear();
        self.last = None;
    }

    /// The last echo written (since the line started).
    pub fn last(&self) -> Option<u32> {
        self.last
    }

    /// `echo` was written to the PLC.
    pub fn wrote(&mut self, echo: u32) {
        if self.last == Some(echo) {
            return;
        }
        self.last = Some(echo);
        if self.written.len() == KEPT {
            self.written.pop_front();
        }
        self.written.push_back(echo);
    }

    /// The PLC's sample of `counter`, the one seen before it being of `previous`, says
    /// `reaction`: that figure, when it belongs to an echo written and not counted yet (0: the
    /// PLC has not taken any echo yet).
    pub fn taken(&mut self, previous: u32, counter: u32, reaction: u32) -> Option<u32> {
        if reaction == 0 {
            return None;
        }
        // Cycles after `previous`, up to `counter`, at which the figure may have been set.
        let span = counter.wrapping_sub(previous);
        let set_in = |e: u32| {
            let at = e.wrapping_add(reaction).wrapping_sub(previous);
            at >= 1 && at <= span
        };
        let at = self.written.iter().rposition(|&e| set_in(e))?;
        self.written.drain(..=at);
        Some(reaction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_echo_the_plc_took_counts_once_and_a_held_figure_not_again() {
        let mut echoes = Echoes::default();
        // The shadow echoes 10 and 11; the PLC takes 11 at cycle 12 (reaction 1) and holds the
        // figure in cycles 13 and 14 (no new echo came).
        echoes.wrote(10);
        echoes.wrote(11);
        echoes.wrote(11);
        assert_eq!(echoes.taken(11, 12, 1), Some(1));
        assert_eq!(echoes.taken(12, 13, 1), None, "the same figure, held");
        assert_eq!(echoes.taken(13, 14, 1), None);
        assert_eq!(
            echoes.taken(11, 12, 2),
            None,
            "10 came before 11: never taken"
        );
        // Echo 14 taken at 16: 2 cycles.
        echoes.wrote(14);
        assert_eq!(echoes.taken(15, 16, 2), Some(2));
        assert_eq!(echoes.taken(16, 17, 0), None);
        // Through the counter's wrap.
        echoes.wrote(u32::MAX);
        assert_eq!(echoes.taken(u32::MAX, 0, 1), Some(1));
    }

    #[test]
    fn a_figure_set_between_two_polled_samples_counts_for_its_echo() {
        // Polled every other PLC cycle: echo 20 written, taken at 21 (1 cycle), the figure held
        // at 22, which is the sample seen next (after 20).
        let mut echoes = Echoes::default();
        echoes.wrote(20);
        assert_eq!(echoes.taken(20, 22, 1), Some(1));
        // Echo 22 taken late, at 24 (2 cycles): seen on the sample of 24.
        echoes.wrote(22);
        assert_eq!(echoes.taken(22, 24, 2), Some(2));
        // Seen again at 26 with no new echo taken: held, no echo left to count it for.
        assert_eq!(echoes.taken(24, 26, 2), None);
    }
}
