//! The shadow's symbols as the link addresses them: their order, names, shapes and types.

use crate::plc_symbols::PlcSymbols;
use crate::wire::Scalar;

/// The shadow's symbols, in the order their names are handed to the transport (a slot's
/// `index()` is its position there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    FrameAnchors,
    PlatformAnchors,
    Lengths,
    CableAngles,
    TcpPose,
    Commanded,
    Cycle,
    Enable,
    ShadowPose,
    ShadowLengths,
    ShadowTensions,
    ShadowCycle,
    /// Optional: the PLC's reaction-time diagnostic (resolved only if the PLC has it).
    Reaction,
    /// Optional, both or neither: swivel-pulley radii (mm) and unit axes, read with the
    /// geometry when the PLC has them.
    PulleyRadii,
    PulleyAxes,
}

impl Slot {
    /// The symbols every controller must have, in transport order.
    pub(super) const REQUIRED: [Slot; 12] = [
        Slot::FrameAnchors,
        Slot::PlatformAnchors,
        Slot::Lengths,
        Slot::CableAngles,
        Slot::TcpPose,
        Slot::Commanded,
        Slot::Cycle,
        Slot::Enable,
        Slot::ShadowPose,
        Slot::ShadowLengths,
        Slot::ShadowTensions,
        Slot::ShadowCycle,
    ];
    /// What the shadow writes back each cycle.
    pub(super) const OUTPUTS: [Slot; 4] = [
        Slot::ShadowPose,
        Slot::ShadowLengths,
        Slot::ShadowTensions,
        Slot::ShadowCycle,
    ];

    /// The slot's position among the resolved names: the required slots, then the reaction
    /// diagnostic. (The optional pulley slots come after whichever of those the PLC has: the
    /// link looks them up.)
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The symbol's name in `symbols` (the reaction diagnostic's is derived from the counter's).
    pub(super) fn name(self, symbols: &PlcSymbols) -> String {
        let s = symbols;
        match self {
            Slot::FrameAnchors => s.frame_anchors.clone(),
            Slot::PlatformAnchors => s.platform_anchors.clone(),
            Slot::Lengths => s.lengths.clone(),
            Slot::CableAngles => s.cable_angles.clone(),
            Slot::TcpPose => s.tcp_pose.clone(),
            Slot::Commanded => s.commanded_lengths.clone(),
            Slot::Cycle => s.cycle_counter.clone(),
            Slot::Enable => s.motion_enable.clone(),
            Slot::ShadowPose => s.shadow_pose.clone(),
            Slot::ShadowLengths => s.shadow_lengths.clone(),
            Slot::ShadowTensions => s.shadow_tensions.clone(),
            Slot::ShadowCycle => s.shadow_cycle.clone(),
            Slot::Reaction => s.reaction(),
            Slot::PulleyRadii => s.pulley_radii.clone(),
            Slot::PulleyAxes => s.pulley_axes.clone(),
        }
    }

    /// (reals per cable, fixed reals) a real-valued symbol must hold; `None` for scalars.
    pub(super) fn expected_reals(self) -> Option<(usize, usize)> {
        match self {
            Slot::FrameAnchors | Slot::PlatformAnchors => Some((3, 0)),
            Slot::CableAngles => Some((2, 0)),
            Slot::Lengths
            | Slot::Commanded
            | Slot::ShadowLengths
            | Slot::ShadowTensions
            | Slot::PulleyRadii => Some((1, 0)),
            Slot::PulleyAxes => Some((3, 0)),
            Slot::TcpPose | Slot::ShadowPose => Some((0, 6)),
            Slot::Cycle | Slot::Enable | Slot::ShadowCycle | Slot::Reaction => None,
        }
    }

    /// The scalar type of a non-real symbol.
    pub(super) fn scalar(self) -> Scalar {
        match self {
            Slot::Enable => Scalar::Bool,
            _ => Scalar::UDInt,
        }
    }
}
