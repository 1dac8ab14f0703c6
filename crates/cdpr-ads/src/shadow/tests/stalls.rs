//! Stretches without new samples on a live link — a PLC task that stops, a runtime STOP, a run
//! that ends in one — are gaps: nothing stepped or recorded in them, one row with `gap = 1`
//! after, counted in the statistics; not rows of frozen motion. In-process, stepped by hand.

use super::*;
use crate::shadow::reconnect::STALL_MIN;
use crate::wire::ads_state;
use cdpr_core::sim::ModelKind;

/// What a record says about a stretch: its rows' times, cycle counters, enable and gap flags.
struct Rows {
    t: Vec<f64>,
    plc_cycle: Vec<u32>,
    enable: Vec<bool>,
    gap: Vec<bool>,
}

fn rows(buffer: &Buffer) -> Rows {
    let (header, rows) = parse(buffer);
    let (t, c, e, g) = (
        column(&header, "t"),
        column(&header, "plc_cycle"),
        column(&header, "enable"),
        column(&header, "gap"),
    );
    Rows {
        t: rows.iter().map(|r| num(r, t)).collect(),
        plc_cycle: rows.iter().map(|r| num(r, c) as u32).collect(),
        enable: rows.iter().map(|r| r[e] == "1").collect(),
        gap: rows.iter().map(|r| r[g] == "1").collect(),
    }
}

impl Rows {
    /// The longest run of rows with one cycle counter, in shadow time, s.
    fn longest_frozen(&self) -> f64 {
        let mut longest = 0.0_f64;
        let mut from = 0;
        for k in 1..self.t.len() {
            if self.plc_cycle[k] != self.plc_cycle[from] || self.gap[k] {
                from = k;
            }
            longest = longest.max(self.t[k] - self.t[from]);
        }
        longest
    }

    fn gaps(&self) -> Vec<usize> {
        (0..self.gap.len()).filter(|&k| self.gap[k]).collect()
    }
}

/// The PLC at `core` ticked on its 2 ms NC period, the shadow cycled every 2 ms, for `ms`
/// milliseconds; the PLC neither ticks nor makes its ticks up while `held(ms)`, and `poke(ms)`
/// runs before each millisecond. The cycles' statuses.
fn play_held(
    core: &mut PlcCore,
    s: &mut Shadow<InProcessController>,
    ms: u64,
    held: impl Fn(u64) -> bool,
    mut poke: impl FnMut(u64, &PlcCore),
) -> Vec<CycleStatus> {
    let origin = s.clock_origin();
    let mut statuses = Vec::new();
    for now in 1..=ms {
        poke(now, core);
        if now.is_multiple_of(2) {
            if !held(now) {
                core.tick();
            }
            let r = s
                .cycle_at(origin + Duration::from_millis(now))
                .expect("cycle");
            statuses.push(r.status);
        }
    }
    statuses
}

#[test]
fn a_plc_task_that_stops_for_two_seconds_is_one_gap_not_two_seconds_of_frozen_rows() {
    // Polled and free-running at 2 ms against a 10 ms task: the task stops from 1.0 to 3.0 s
    // (its counter stands, its memory still answers). Before, the shadow went on stepping to
    // the wall clock with the counter frozen: 2 s of rows with gap = 0.
    let robot = uvigo8();
    let (mut core, mut s, buffer) = seed000_recorded(&robot, FREE_2MS, ModelKind::ELASTIC);
    let stalled = |ms: u64| (1000..3000).contains(&ms);
    let statuses = play_held(&mut core, &mut s, 4000, stalled, |_, _| {});
    s.finish().expect("flush");
    let limit = s.stall_limit();
    assert!((limit - STALL_MIN).abs() < 1e-12, "10 ms task: {limit} s");
    assert!(limit > 0.1, "one network frame 100 ms late is no stall");
    let held = statuses
        .iter()
        .filter(|&&st| st == CycleStatus::Stalled)
        .count();
    // 2 s less the limit, in 2 ms cycles (give or take the cycles at the edges).
    let expected = ((2.0 - limit) / 0.002) as usize;
    assert!(
        held.abs_diff(expected) <= 6,
        "{held} cycles held, {expected} expected"
    );
    let sum = s.summary();
    assert_eq!((sum.stalls, sum.plc_stops, sum.gaps), (1, 0, 1));
    assert!(
        (sum.without_samples_s - 2.0).abs() < 0.02,
        "{}",
        sum.without_samples_s
    );

    let r = rows(&buffer);
    // One counter value lasts a PLC period, plus what the commands' latency and the limit add
    // at the start of the stall: never the stall itself.
    let frozen = r.longest_frozen();
    assert!(
        frozen < limit + 0.04,
        "{frozen} s of rows with one counter value"
    );
    // Nothing recorded inside the stall; the first row after it is its gap row.
    let gaps = r.gaps();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    let after = gaps[0];
    assert!(
        r.t[after] >= 3.0 && r.t[after] < 3.05,
        "resumed at {}",
        r.t[after]
    );
    assert!(
        r.t[after - 1] < 1.0 + limit + 0.03,
        "last row before: {}",
        r.t[after - 1]
    );
    assert!(r.t.windows(2).all(|w| w[1] > w[0]), "time goes forward");
}

#[test]
fn a_runtime_stop_is_said_as_such_in_both_timings_and_no_row_shows_it_enabled() {
    for timing in [FREE_2MS, LOCKSTEP_10MS] {
        let robot = uvigo8();
        let (mut core, mut s, buffer) = seed000_recorded(&robot, timing, ModelKind::ELASTIC);
        // WriteControl STOP at 1.0 s, RUN again at 2.5 s: the virtual PLC holds everything
        // while stopped, as TwinCAT's runtime does.
        let statuses = play_held(
            &mut core,
            &mut s,
            3500,
            |_| false,
            |ms, core| match ms {
                1000 => core.memory().set_ads_state(ads_state::STOP),
                2500 => core.memory().set_ads_state(ads_state::RUN),
                _ => {}
            },
        );
        s.finish().expect("flush");
        let sum = s.summary();
        assert_eq!(
            (sum.stalls, sum.plc_stops, sum.gaps),
            (1, 1, 1),
            "{timing:?}: {statuses:?}"
        );
        let r = rows(&buffer);
        // Rows of one counter value with motion enabled last no longer than the limit.
        let frozen = r.longest_frozen();
        assert!(
            frozen < s.stall_limit() + 0.04,
            "{timing:?}: {frozen} s frozen"
        );
        let gaps = r.gaps();
        assert_eq!(gaps.len(), 1, "{timing:?}");
        let before = gaps[0] - 1;
        assert!(
            r.t[gaps[0]] - r.t[before] > 1.3,
            "{timing:?}: the STOP is a gap in the record, {} → {}",
            r.t[before],
            r.t[gaps[0]]
        );
        assert!(
            r.enable.iter().any(|&e| e),
            "the trajectory runs before and after"
        );
    }
}

#[test]
fn a_run_that_ends_stalled_closes_its_record_with_one_gap_row_at_its_end() {
    let robot = uvigo8();
    let (mut core, mut s, buffer) = seed000_recorded(&robot, FREE_2MS, ModelKind::ELASTIC);
    play_held(&mut core, &mut s, 2000, |ms| ms >= 1000, |_, _| {});
    assert!(s.is_stalled());
    let end = s.clock_origin() + Duration::from_millis(2500);
    // Stalled, not lost: the link still answers, so no error.
    s.end_at(end, Duration::from_millis(500))
        .expect("a stall is no lost PLC");
    s.finish().expect("flush");
    let r = rows(&buffer);
    let last = r.t.len() - 1;
    assert!(
        r.gap[last] && !r.enable[last],
        "the closing row is a gap row, not enabled"
    );
    assert!((r.t[last] - 2.5).abs() < 1e-9, "at the end: {}", r.t[last]);
    assert!(
        (s.time() - 2.5).abs() < 1e-9,
        "simulated_s says the same: {}",
        s.time()
    );
    assert_eq!(s.stats().gaps, r.gaps().len() as u64);
    // From the last PLC cycle (the 10 ms task's, at 0.99 s) to the end.
    let without = s.stats().without_samples_s;
    assert!(
        (1.5..1.52).contains(&without),
        "{without} s without samples"
    );
}
