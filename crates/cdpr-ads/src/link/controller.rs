//! What the shadow needs from a controller ([`Controller`]) and what goes back and forth: the
//! geometry read at start, each cycle's inputs and outputs (SI: the link converts).

use super::ads_client::Exchange;
use super::error::ControllerError;
use cdpr_core::kinematics::Pose;
use nalgebra::Vector3;

/// The geometry a controller holds, SI (seed 000 builds its model from exactly this).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerGeometry {
    /// a_i, world frame, m.
    pub frame_anchors: Vec<Vector3<f64>>,
    /// b_i, platform frame, m.
    pub platform_anchors: Vec<Vector3<f64>>,
    /// Current cable lengths, m.
    pub lengths: Vec<f64>,
    /// (θz, θx) per cable, rad (seed 000 eqs. 2–3).
    pub cable_angles: Vec<[f64; 2]>,
    /// TCP pose, m and rad.
    pub tcp_pose: Pose,
    /// The swivel pulleys, when the controller publishes them (`pulley_radii`, `pulley_axes`).
    pub pulleys: Option<ControllerPulleys>,
}

/// Swivel pulleys as a controller holds them, SI.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerPulleys {
    /// Wheel radius per cable, m (0: the cable leaves at its frame anchor).
    pub radii: Vec<f64>,
    /// Unit swivel axis per cable, world frame.
    pub axes: Vec<Vector3<f64>>,
}

/// What the shadow reads every cycle, in one sum read.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleInputs {
    /// Commanded cable lengths, m.
    pub commanded_lengths: Vec<f64>,
    /// The PLC's cycle counter.
    pub cycle: u32,
    pub motion_enable: bool,
    /// The PLC's own reaction-time diagnostic (`nReactionCycles` beside the cycle counter,
    /// PLC cycles), read in the same sum read when the PLC has that symbol.
    pub reaction_cycles: Option<u32>,
    /// The PLC's time stamp of the sample (Windows FILETIME, 100 ns ticks since 1601) when
    /// it came by notification; `None` when polled.
    pub plc_time: Option<u64>,
    /// The values of [`PlcSymbols::watched`](crate::PlcSymbols::watched), in its order, as
    /// numbers (BOOL 0 or 1): read in the same sum read (or notification) as the inputs.
    pub watched: Vec<f64>,
    /// The drives' actual torques, N·m motor side (`[plc] actual_torques`, converted from
    /// the file's unit); empty when not read.
    pub actual_torques: Vec<f64>,
    /// The drives' actual payouts, m (`[plc] actual_lengths`, or `actual_motor_positions`
    /// through the encoder scaling); empty when not read.
    pub actual_lengths: Vec<f64>,
}

/// One sample as the link decoded it.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// Its inputs, in SI.
    Usable(CycleInputs),
    /// Values that cannot be used — why ([`ControllerError::NotFinite`], the symbol and element
    /// named) — with the cycle counter and the stamp the sample carried: a PLC cycle that was
    /// sent, not one missed.
    Unusable {
        cycle: u32,
        plc_time: Option<u64>,
        error: ControllerError,
    },
}

impl Sample {
    /// The PLC's cycle counter the sample carried.
    pub fn cycle(&self) -> u32 {
        match self {
            Sample::Usable(i) => i.cycle,
            Sample::Unusable { cycle, .. } => *cycle,
        }
    }

    /// The inputs, when they can be used.
    pub fn usable(&self) -> Option<&CycleInputs> {
        match self {
            Sample::Usable(i) => Some(i),
            Sample::Unusable { .. } => None,
        }
    }
}

/// What the shadow writes back every cycle, in one sum write.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowOutputs {
    /// Platform pose, m and rad.
    pub pose: Pose,
    /// Cable lengths, m.
    pub lengths: Vec<f64>,
    /// Cable tensions, N.
    pub tensions: Vec<f64>,
    /// The PLC cycle counter these outputs answer (lets the PLC measure the reaction time).
    pub cycle: u32,
    /// Something interferes at the pose (written when `[plc] interference` names a symbol).
    pub interference: bool,
    /// Robots with drives: the shadow's motor torques, N·m (`[plc] shadow_torques`, and the
    /// axes' stand-in torques `axis_torques`).
    pub torques: Vec<f64>,
    /// The torque each drive will need one PLC cycle ahead, N·m (`[plc]
    /// feedforward_torques`).
    pub feedforward_torques: Vec<f64>,
    /// The winches' payouts, m (the axes' stand-in positions `axis_positions`, in encoder
    /// increments).
    pub payouts: Vec<f64>,
}

/// The shadow's view of a controller: what its cycle reads and writes, in its own terms
/// (samples, geometry, outputs), not the link's (symbol handles, sum commands, notifications).
/// One implementation, [`ShadowLink`](super::shadow_link::ShadowLink), generic over the
/// transport (ADS over TCP or TLS, in-process); the trait keeps the shadow's cycle, reconnect
/// and start-up logic (`crate::shadow`) from depending on how a link talks.
pub trait Controller {
    /// Cables, as the controller's symbol sizes say.
    fn cable_count(&self) -> usize;
    /// Reads the geometry (once, at start, and after a reconnect if wanted).
    fn read_geometry(&mut self) -> Result<ControllerGeometry, ControllerError>;
    /// The newest sample of commanded lengths, cycle counter and motion enable (one sum read,
    /// or the newest notification: the others that came are taken with it; the last one again
    /// when none has come).
    fn read_cycle(&mut self) -> Result<CycleInputs, ControllerError> {
        let mut samples = Vec::new();
        self.read_samples(&mut samples)?;
        match samples.pop() {
            Some(Sample::Usable(newest)) => Ok(newest),
            Some(Sample::Unusable { error, .. }) => Err(error),
            None => self
                .last_sample()
                .cloned()
                .ok_or_else(|| ControllerError::Link("no sample has come from the PLC yet".into())),
        }
    }
    /// Every sample that has come since the last read into `out`, oldest first: one per sum
    /// read when polled, each the PLC sent when they come by notification (none when none has
    /// come). A sample with a NaN or an infinity is there as [`Sample::Unusable`]; any other
    /// error fails the read.
    fn read_samples(&mut self, out: &mut Vec<Sample>) -> Result<(), ControllerError>;
    /// The last sample read that could be decoded.
    fn last_sample(&self) -> Option<&CycleInputs>;
    /// Waits until `until`, or less when samples the PLC sends of its own accord
    /// (notifications) may have come: true then. A polled controller sleeps to `until`.
    fn wait_for_inputs(&mut self, until: std::time::Instant) -> bool {
        std::thread::sleep(until.saturating_duration_since(std::time::Instant::now()));
        false
    }
    /// One sum write of pose, lengths, tensions and cycle echo. Refused unless writing is
    /// enabled and all four symbols are on the allow-list.
    fn write_cycle(&mut self, outputs: &ShadowOutputs) -> Result<(), ControllerError>;
    /// Re-establishes a lost link and re-resolves the symbols (one attempt).
    fn reconnect(&mut self) -> Result<(), ControllerError>;
    /// The PLC runtime's ADS state (`wire::ads_state`: RUN, STOP, …), asked now (ADS
    /// ReadState); `None` where the controller cannot say. A link error is a lost link.
    fn plc_state(&mut self) -> Result<Option<u16>, ControllerError> {
        Ok(None)
    }
    /// How reads and writes currently travel; `None` when there is no choice (in-process) or
    /// none made yet on this connection.
    fn exchange(&self) -> Option<Exchange> {
        None
    }
    /// Times the symbols were re-resolved on a live link because the PLC invalidated their
    /// handles (an online change or a re-download): each is a gap the shadow accounts for.
    fn re_resolves(&self) -> u64 {
        0
    }
}
