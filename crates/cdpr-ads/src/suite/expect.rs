//! What a scenario expects of its run, as one typed request (a suite's `[scenario.expect]`
//! table): each bound with its unit, range and help written once, here. A bound left out is
//! not checked.

use cdpr_core::options::{Group, flag, number, whole};

cdpr_core::request! {
    /// The bounds a scenario's run is held to (`[scenario.expect]`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct Expectations, table EXPECT_OPTIONS;
    /// Largest RMS distance of the platform from the commanded pose, m.
    tracking_rms: Option<f64> = None,
        number(Group::Command, "m", 0.0, 10.0, "M",
            "at most this RMS distance of the shadow's platform from the commanded pose (forward \
             kinematics of the commanded lengths), over the run");
    /// Largest distance of the platform from the commanded pose, m.
    tracking_max: Option<f64> = None,
        number(Group::Command, "m", 0.0, 10.0, "M",
            "at most this distance of the shadow's platform from the commanded pose, at any step");
    /// Lowest tension any cable may have, N.
    tension_min: Option<f64> = None,
        number(Group::Command, "N", -1e9, 1e9, "N", "every cable's tension at least this, at every step");
    /// Highest tension any cable may have, N.
    tension_max: Option<f64> = None,
        number(Group::Command, "N", -1e9, 1e9, "N", "every cable's tension at most this, at every step");
    /// No cable goes slack.
    no_slack: bool = false,
        flag(Group::Command, "no cable slack (tension at or below the slack threshold) at any step");
    /// No interference between cables, platform and obstacles.
    no_interference: bool = false,
        flag(Group::Command, "no exchange whose pose brings cables, platform or obstacles closer \
             than the link's clearance");
    /// The PLC's reaction figure's 99th percentile, PLC cycles.
    reaction_p99: Option<usize> = None,
        whole(Group::Command, 0, 1_000_000,
            "at most this 99th percentile of the PLC's reaction figure (cycles from a command to \
             the shadow's echo)").value_name("CYCLES");
    /// The PLC's largest reaction figure, PLC cycles.
    reaction_max: Option<usize> = None,
        whole(Group::Command, 0, 1_000_000, "at most this largest reaction figure")
            .value_name("CYCLES");
    /// PLC cycles whose samples never reached the shadow.
    missed_plc_cycles: Option<usize> = None,
        whole(Group::Command, 0, u32::MAX as u64, "at most this many PLC cycles missed by the shadow")
            .value_name("N");
    /// Gaps in the run (link lost, PLC restarted, samples stalled).
    gaps: Option<usize> = None,
        whole(Group::Command, 0, u32::MAX as u64,
            "at most this many gaps (the link lost, the PLC restarted, its samples stalled)")
            .value_name("N");
    /// The trajectory passes `cdpr preflight`.
    preflight: bool = false,
        flag(Group::Command, "the virtual PLC's trajectory passes every check of `cdpr preflight` \
             (with its defaults)");
}
