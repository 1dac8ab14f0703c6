//! What the shadow needs from a controller, as a trait ([`Controller`]), and the one
//! implementation of it, [`ShadowLink`], over two transports: the `ads` crate client
//! ([`AdsTransport`](super::ads_client::AdsTransport), a real TwinCAT or `cdpr plc`) and the
//! virtual PLC's memory in-process ([`InProcessTransport`](super::in_process::InProcessTransport),
//! no sockets, for fast tests).
//!
//! Everything that keeps a real machine safe lives here, above the transport, so both
//! transports share it: nothing is written unless writing was enabled, and then only symbols
//! on the robot file's `plc.writable` allow-list — checked before a single byte goes out;
//! values read that are NaN or infinite are refused with the symbol and element named; mm and
//! degrees are converted to SI here and nowhere else on the shadow's side.

use super::ads_client::Exchange;
use crate::plc_symbols::PlcSymbols;
use crate::server::memory;
use crate::server::symbols::{IecType, Scalar};
use crate::units::{from_mm, pose_from_plc, pose_to_plc, to_mm};
use cdpr_core::kinematics::Pose;
use nalgebra::Vector3;
use std::collections::HashSet;

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
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControllerError {
    #[error("PLC symbol `{symbol}`: {reason}")]
    Symbol { symbol: String, reason: String },
    #[error("PLC symbol `{symbol}` element {element}: {value} is not a finite number")]
    NotFinite {
        symbol: String,
        element: usize,
        value: f64,
    },
    #[error("writing to the PLC is disabled (the shadow writes only with --write)")]
    WriteDisabled,
    #[error(
        "PLC symbol `{symbol}` is not on the robot file's plc.writable allow-list: nothing was written"
    )]
    NotWritable { symbol: String },
    #[error("PLC symbol `{symbol}`: ADS error {code:#x} ({text})")]
    Ads {
        symbol: String,
        code: u32,
        text: String,
    },
    /// The connection is gone or unusable: reconnect (see [`Backoff`]).
    #[error("link to the PLC lost: {0}")]
    Link(String),
    /// No TCP connection to the controller could be opened (reconnecting may help later).
    #[error("{}", unreachable_text(endpoint, *refused, text))]
    Unreachable {
        endpoint: String,
        /// Refused: the host answered that nothing listens on the port.
        refused: bool,
        text: String,
    },
    /// The PLC no longer knows a handle the link holds (ADS 0x710 symbol not found, 0x711
    /// symbol version invalid, 0x722 symbol not active, 0x1 internal error on a handle): an
    /// online change or a re-download. [`ShadowLink`] re-resolves and carries on.
    #[error(
        "PLC symbol `{symbol}`: ADS error {code:#x} ({text}): its handle is stale (an online change or a re-download)"
    )]
    Stale {
        symbol: String,
        code: u32,
        text: String,
    },
    /// The exchange asked for is not served by this PLC (see [`Exchange`]).
    #[error(
        "the PLC does not serve the `{exchange}` exchange ({}): {reason}; `auto` uses what it serves",
        exchange.wire()
    )]
    Unsupported { exchange: Exchange, reason: String },
}

impl ControllerError {
    /// Whether reconnecting may help.
    pub fn is_link(&self) -> bool {
        matches!(
            self,
            ControllerError::Link(_) | ControllerError::Unreachable { .. }
        )
    }

    /// Whether re-resolving the symbols on the same link may help.
    pub fn is_stale(&self) -> bool {
        matches!(self, ControllerError::Stale { .. })
    }
}

fn unreachable_text(endpoint: &str, refused: bool, text: &str) -> String {
    if refused {
        format!(
            "no PLC listening on {endpoint} (connection refused): is TwinCAT — or `cdpr plc` — \
             running on that host, and the port right (ADS: 48898)?"
        )
    } else {
        format!("cannot open a TCP connection to {endpoint}: {text}")
    }
}

/// The shadow's view of a controller.
pub trait Controller {
    /// Cables, as the controller's symbol sizes say.
    fn cable_count(&self) -> usize;
    /// Reads the geometry (once, at start, and after a reconnect if wanted).
    fn read_geometry(&mut self) -> Result<ControllerGeometry, ControllerError>;
    /// One sum read of commanded lengths, cycle counter and motion enable.
    fn read_cycle(&mut self) -> Result<CycleInputs, ControllerError>;
    /// One sum write of pose, lengths, tensions and cycle echo. Refused unless writing is
    /// enabled and all four symbols are on the allow-list.
    fn write_cycle(&mut self, outputs: &ShadowOutputs) -> Result<(), ControllerError>;
    /// Re-establishes a lost link and re-resolves the symbols (one attempt).
    fn reconnect(&mut self) -> Result<(), ControllerError>;
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

/// Moves bytes of named symbols; the transport under [`ShadowLink`].
pub trait Transport {
    /// Resolves the names (handles, types); called on connect and after each reconnect.
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError>;
    /// Reads the given symbols (indices into the resolved names): in one request where the
    /// PLC serves sum commands, else one per symbol (see [`Exchange`]). A handle the PLC no
    /// longer knows is [`ControllerError::Stale`].
    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError>;
    /// Writes the given symbols, as [`Transport::sum_read`] reads them.
    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError>;
    /// Opens a new link (the old one is dropped).
    fn reopen(&mut self) -> Result<(), ControllerError>;
    /// The exchange in use on this link, once picked (see [`Controller::exchange`]).
    fn exchange(&self) -> Option<Exchange> {
        None
    }
}

/// The shadow's symbols, in the order their names are handed to the transport (a slot's
/// `index()` is its position there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
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
}

impl Slot {
    /// The symbols every controller must have, in transport order.
    const REQUIRED: [Slot; 12] = [
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
    const OUTPUTS: [Slot; 4] = [
        Slot::ShadowPose,
        Slot::ShadowLengths,
        Slot::ShadowTensions,
        Slot::ShadowCycle,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The symbol's name in `symbols` (the reaction diagnostic's is derived from the counter's).
    fn name(self, symbols: &PlcSymbols) -> String {
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
            Slot::Reaction => crate::server::symbols::reaction_symbol(s),
        }
    }

    /// (reals per cable, fixed reals) a real-valued symbol must hold; `None` for scalars.
    fn expected_reals(self) -> Option<(usize, usize)> {
        match self {
            Slot::FrameAnchors | Slot::PlatformAnchors => Some((3, 0)),
            Slot::CableAngles => Some((2, 0)),
            Slot::Lengths | Slot::Commanded | Slot::ShadowLengths | Slot::ShadowTensions => {
                Some((1, 0))
            }
            Slot::TcpPose | Slot::ShadowPose => Some((0, 6)),
            Slot::Cycle | Slot::Enable | Slot::ShadowCycle | Slot::Reaction => None,
        }
    }

    /// The scalar type of a non-real symbol.
    fn scalar(self) -> Scalar {
        match self {
            Slot::Enable => Scalar::Bool,
            _ => Scalar::UDInt,
        }
    }
}

/// Whether the shadow may write at all (`--write`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePolicy {
    ReadOnly,
    AllowListed,
}

/// [`Controller`] over a [`Transport`].
pub struct ShadowLink<T: Transport> {
    transport: T,
    names: Vec<String>,
    types: Vec<IecType>,
    cables: usize,
    writable: HashSet<String>,
    policy: WritePolicy,
    /// Whether the reaction diagnostic exists on the PLC and is read every cycle.
    has_reaction: bool,
    /// Re-resolutions after stale handles (see [`Controller::re_resolves`]).
    re_resolves: u64,
}

impl<T: Transport> ShadowLink<T> {
    /// Resolves every symbol of `symbols` over `transport` and checks their types: REAL or
    /// LREAL arrays sized for one cable count (taken from the frame anchors), UDINT counters,
    /// a BOOL enable flag. Errors name the symbol.
    pub fn connect(
        mut transport: T,
        symbols: &PlcSymbols,
        policy: WritePolicy,
    ) -> Result<ShadowLink<T>, ControllerError> {
        let mut names: Vec<String> = Slot::REQUIRED.iter().map(|s| s.name(symbols)).collect();
        // The reaction diagnostic is optional (a TwinCAT GVL may leave it out): probe it alone
        // first, so that a PLC without it costs no half-resolved set of handles.
        let reaction = Slot::Reaction.name(symbols);
        let has_reaction = probe_reaction(&mut transport, &reaction)?;
        if has_reaction {
            names.push(reaction);
        }
        let types = transport.resolve(&names)?;
        let cables = check_types(&names, &types)?;
        Ok(ShadowLink {
            transport,
            names,
            types,
            cables,
            writable: symbols
                .writable
                .iter()
                .map(|n| n.to_ascii_lowercase())
                .collect(),
            policy,
            has_reaction,
            re_resolves: 0,
        })
    }

    /// The PLC's reaction-time diagnostic symbol, if the PLC has one (read every cycle into
    /// [`CycleInputs::reaction_cycles`]).
    pub fn reaction_symbol(&self) -> Option<&str> {
        self.has_reaction
            .then(|| self.names[Slot::Reaction.index()].as_str())
    }

    pub fn transport(&self) -> &T {
        &self.transport
    }

    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    /// Resolves every symbol again (on the link as it is) and checks that the types still fit
    /// the same robot; drops the reaction diagnostic if the PLC no longer has it.
    fn resolve_all(&mut self) -> Result<(), ControllerError> {
        let reaction = Slot::Reaction.index();
        if self.has_reaction && !probe_reaction(&mut self.transport, &self.names[reaction])? {
            // The PLC lacks the optional diagnostic now: carry on without it.
            self.names.truncate(reaction);
            self.has_reaction = false;
        }
        let types = self.transport.resolve(&self.names)?;
        let cables = check_types(&self.names, &types)?;
        if cables != self.cables {
            return Err(ControllerError::Symbol {
                symbol: self.names[Slot::FrameAnchors.index()].clone(),
                reason: format!(
                    "now holds {cables} cables, {} before the symbols were resolved again",
                    self.cables
                ),
            });
        }
        self.types = types;
        Ok(())
    }

    /// Runs `op` on the transport; when the PLC answers that a handle is stale (an online
    /// change or a re-download), re-resolves every symbol on the same link and runs it once
    /// more. Stale again right after: the link is given up (the shadow reconnects).
    fn with_fresh_handles<R>(
        &mut self,
        op: impl Fn(&mut Self) -> Result<R, ControllerError>,
    ) -> Result<R, ControllerError> {
        let stale = match op(self) {
            Err(e @ ControllerError::Stale { .. }) => e,
            other => return other,
        };
        tracing::warn!("{stale}; re-resolving the symbols and carrying on");
        self.resolve_all()?;
        self.re_resolves += 1;
        match op(self) {
            Err(e @ ControllerError::Stale { .. }) => Err(ControllerError::Link(format!(
                "{e}, again right after re-resolving"
            ))),
            other => other,
        }
    }

    fn reals(&self, slot: Slot, bytes: &[u8]) -> Result<Vec<f64>, ControllerError> {
        let (name, ty) = (&self.names[slot.index()], &self.types[slot.index()]);
        let values = memory::decode_reals(ty, bytes).ok_or_else(|| ControllerError::Symbol {
            symbol: name.clone(),
            reason: format!("expected {} bytes, got {}", ty.size(), bytes.len()),
        })?;
        if let Some((element, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ControllerError::NotFinite {
                symbol: name.clone(),
                element: element + 1,
                value,
            });
        }
        Ok(values)
    }

    fn scalar(&self, slot: Slot, bytes: &[u8]) -> Result<u32, ControllerError> {
        let ty = &self.types[slot.index()];
        memory::decode_u32(ty, bytes).ok_or_else(|| ControllerError::Symbol {
            symbol: self.names[slot.index()].clone(),
            reason: format!("cannot decode {} bytes as {}", bytes.len(), ty.type_name()),
        })
    }

    fn encode(&self, slot: Slot, values: &[f64]) -> Result<Vec<u8>, ControllerError> {
        let (name, ty) = (&self.names[slot.index()], &self.types[slot.index()]);
        if let Some((element, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ControllerError::NotFinite {
                symbol: name.clone(),
                element: element + 1,
                value,
            });
        }
        memory::encode_reals(ty, values).ok_or_else(|| ControllerError::Symbol {
            symbol: name.clone(),
            reason: format!("{} values do not fit {}", values.len(), ty.type_name()),
        })
    }
}

/// Whether `name` resolves to a UDINT scalar. A PLC that does not answer about an unknown
/// name at all (pyads' test server raises and never replies) costs one timeout: the link is
/// reopened — a late reply would desynchronise it — and the shadow carries on without it.
fn probe_reaction<T: Transport>(transport: &mut T, name: &str) -> Result<bool, ControllerError> {
    match transport.resolve(&[name.to_string()]) {
        Ok(types) => Ok(matches!(
            types.as_slice(),
            [ty] if ty.scalar == Scalar::UDInt && ty.dims.is_empty()
        )),
        Err(e) if e.is_link() => {
            tracing::info!("no answer about the optional `{name}` ({e}); reopening the link");
            transport.reopen()?;
            Ok(false)
        }
        Err(_) => Ok(false),
    }
}

/// Checks the resolved types: REAL or LREAL arrays sized for one cable count (taken from the
/// frame anchors), UDINT counters, a BOOL enable flag. Returns the cable count.
fn check_types(names: &[String], types: &[IecType]) -> Result<usize, ControllerError> {
    let bad = |slot: Slot, reason: String| ControllerError::Symbol {
        symbol: names[slot.index()].clone(),
        reason,
    };
    let anchors = &types[Slot::FrameAnchors.index()];
    if !anchors.elements().is_multiple_of(3) || anchors.elements() == 0 {
        return Err(bad(
            Slot::FrameAnchors,
            format!("{} is not an m×3 array", anchors.type_name()),
        ));
    }
    let cables = anchors.elements() / 3;
    let slots = Slot::REQUIRED
        .iter()
        .chain(std::iter::once(&Slot::Reaction));
    for (&slot, ty) in slots.zip(types) {
        match slot.expected_reals() {
            Some((per_cable, fixed)) => {
                let want = per_cable * cables + fixed;
                if !matches!(ty.scalar, Scalar::Real | Scalar::LReal) || ty.elements() != want {
                    return Err(bad(
                        slot,
                        format!(
                            "is {}, expected {want} REAL or LREAL values for {cables} cables",
                            ty.type_name()
                        ),
                    ));
                }
            }
            None => {
                let want = slot.scalar();
                if ty.scalar != want || !ty.dims.is_empty() {
                    return Err(bad(
                        slot,
                        format!("is {}, expected {}", ty.type_name(), want.name()),
                    ));
                }
            }
        }
    }
    Ok(cables)
}

fn vectors_m(mm: &[f64]) -> Vec<Vector3<f64>> {
    mm.chunks_exact(3)
        .map(|c| Vector3::new(c[0], c[1], c[2]) / 1e3)
        .collect()
}

impl<T: Transport> Controller for ShadowLink<T> {
    fn cable_count(&self) -> usize {
        self.cables
    }

    fn read_geometry(&mut self) -> Result<ControllerGeometry, ControllerError> {
        let slots = [
            Slot::FrameAnchors,
            Slot::PlatformAnchors,
            Slot::Lengths,
            Slot::CableAngles,
            Slot::TcpPose,
        ];
        let indices = slots.map(Slot::index);
        let raw = self.with_fresh_handles(|link| link.transport.sum_read(&indices))?;
        let v: Vec<Vec<f64>> = slots
            .iter()
            .zip(&raw)
            .map(|(&slot, bytes)| self.reals(slot, bytes))
            .collect::<Result<_, _>>()?;
        Ok(ControllerGeometry {
            frame_anchors: vectors_m(&v[0]),
            platform_anchors: vectors_m(&v[1]),
            lengths: from_mm(v[2].iter().copied()),
            cable_angles: v[3]
                .chunks_exact(2)
                .map(|c| [c[0].to_radians(), c[1].to_radians()])
                .collect(),
            tcp_pose: pose_from_plc(&v[4]),
        })
    }

    fn read_cycle(&mut self) -> Result<CycleInputs, ControllerError> {
        let all = [Slot::Commanded, Slot::Cycle, Slot::Enable, Slot::Reaction].map(Slot::index);
        // The slot count is taken inside: re-resolving may drop the reaction diagnostic.
        let (raw, wanted) = self.with_fresh_handles(|link| {
            let slots = &all[..if link.has_reaction { 4 } else { 3 }];
            Ok((link.transport.sum_read(slots)?, slots.len()))
        })?;
        if raw.len() != wanted {
            return Err(ControllerError::Link(format!(
                "sum read returned {} of {wanted} symbols",
                raw.len()
            )));
        }
        let reaction_cycles = match raw.get(3) {
            Some(bytes) => Some(self.scalar(Slot::Reaction, bytes)?),
            None => None,
        };
        Ok(CycleInputs {
            commanded_lengths: from_mm(self.reals(Slot::Commanded, &raw[0])?),
            cycle: self.scalar(Slot::Cycle, &raw[1])?,
            motion_enable: self.scalar(Slot::Enable, &raw[2])? != 0,
            reaction_cycles,
        })
    }

    fn write_cycle(&mut self, out: &ShadowOutputs) -> Result<(), ControllerError> {
        if self.policy != WritePolicy::AllowListed {
            return Err(ControllerError::WriteDisabled);
        }
        // The allow-list first, for all four, so that a refused write writes nothing.
        for slot in Slot::OUTPUTS {
            let name = &self.names[slot.index()];
            if !self.writable.contains(&name.to_ascii_lowercase()) {
                return Err(ControllerError::NotWritable {
                    symbol: name.clone(),
                });
            }
        }
        let pose = pose_to_plc(&out.pose);
        let lengths = to_mm(out.lengths.iter().copied());
        let cycle_slot = Slot::ShadowCycle.index();
        let cycle = memory::encode_u32(&self.types[cycle_slot], out.cycle).ok_or_else(|| {
            ControllerError::Symbol {
                symbol: self.names[cycle_slot].clone(),
                reason: "is not a UDINT".into(),
            }
        })?;
        let items = vec![
            (
                Slot::ShadowPose.index(),
                self.encode(Slot::ShadowPose, &pose)?,
            ),
            (
                Slot::ShadowLengths.index(),
                self.encode(Slot::ShadowLengths, &lengths)?,
            ),
            (
                Slot::ShadowTensions.index(),
                self.encode(Slot::ShadowTensions, &out.tensions)?,
            ),
            (cycle_slot, cycle),
        ];
        self.with_fresh_handles(|link| link.transport.sum_write(&items))
    }

    fn reconnect(&mut self) -> Result<(), ControllerError> {
        self.transport.reopen()?;
        self.resolve_all()
    }

    fn exchange(&self) -> Option<Exchange> {
        self.transport.exchange()
    }

    fn re_resolves(&self) -> u64 {
        self.re_resolves
    }
}

#[cfg(test)]
mod tests;
