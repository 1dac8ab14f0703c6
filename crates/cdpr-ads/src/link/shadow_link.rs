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
use super::controller::{
    Controller, ControllerGeometry, ControllerPulleys, CycleInputs, Sample, ShadowOutputs,
};
use super::error::ControllerError;
use super::slot::Slot;
use super::transport::Inputs;
use super::transport::Transport;
use super::write_policy::{WriteAccess, WritePolicy};
use crate::plc_symbols::{DriveSymbols, PlcSymbols, PositionUnit};
use crate::units::{from_mm, pose_from_plc, pose_to_plc, to_mm};
use crate::wire::{self, IecType, Scalar};
use cdpr_core::robot::MAX_CABLES;
use nalgebra::Vector3;

/// [`Controller`] over a [`Transport`].
pub struct ShadowLink<T: Transport> {
    transport: T,
    names: Vec<String>,
    types: Vec<IecType>,
    cables: usize,
    /// The write policy resolved against the allow-list when the link was made.
    access: WriteAccess,
    /// Whether the reaction diagnostic exists on the PLC and is read every cycle.
    has_reaction: bool,
    /// Where the optional pulley symbols sit among `names` (radii, then axes), when the PLC
    /// has both.
    pulleys_at: Option<usize>,
    /// Re-resolutions after stale handles (see [`Controller::re_resolves`]).
    re_resolves: u64,
    /// The interference flag (`[plc] interference`), the last of `names` before the watched
    /// symbols when named.
    interference: bool,
    /// Where the watched symbols ([`PlcSymbols::watched`]) start among `names`; they end
    /// where the drive symbols start.
    watched_at: usize,
    /// Where the drive symbols ([`PlcSymbols::drives`]) start among `names` (the last ones:
    /// the symbols read, then those written), which of them there are, and how to convert.
    drives_at: usize,
    drive_io: DriveIo,
    drive_symbols: DriveSymbols,
    /// The last sample decoded (what [`Controller::read_cycle`] returns when none new came).
    last: Option<CycleInputs>,
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
        let reaction_probe = probe(&mut transport, std::slice::from_ref(&reaction), is_counter)?;
        let has_reaction = reaction_probe == Probe::Present;
        if has_reaction {
            names.push(reaction);
        }
        // The pulleys are optional too (a robot whose cables leave at points has none), asked
        // for only when the robot has pulleys, its `[plc]` names them, or there is no robot
        // file. A PLC that left the question about the reaction diagnostic unanswered (pyads'
        // test server) is not asked again: each unanswered question costs a timeout.
        let pulley_names = [
            Slot::PulleyRadii.name(symbols),
            Slot::PulleyAxes.name(symbols),
        ];
        let pulleys_at = if symbols.read_pulleys
            && reaction_probe != Probe::Silent
            && probe(&mut transport, &pulley_names, are_real_arrays)? == Probe::Present
        {
            names.extend(pulley_names);
            Some(names.len() - 2)
        } else {
            None
        };
        let interference = symbols.interference.is_some();
        if let Some(flag) = &symbols.interference {
            names.push(flag.clone());
        }
        let watched_at = names.len();
        names.extend(symbols.watched.iter().cloned());
        let drives_at = names.len();
        let drive_io = DriveIo::of(&symbols.drives);
        names.extend(
            symbols
                .drives
                .read()
                .chain(symbols.drives.written())
                .cloned(),
        );
        let types = transport.resolve(&names)?;
        let cables = check_types(
            &slots_of(has_reaction, pulleys_at),
            &names[..drives_at],
            &types[..drives_at],
            interference,
            watched_at,
        )?;
        check_drive_types(
            &names[drives_at..],
            &types[drives_at..],
            &symbols.drives,
            cables,
        )?;
        let extra: Vec<&String> = symbols
            .interference
            .iter()
            .chain(symbols.drives.written())
            .collect();
        Ok(ShadowLink {
            access: WriteAccess::resolve_with(policy, &names, &extra, &symbols.writable),
            interference,
            watched_at,
            drives_at,
            drive_io,
            drive_symbols: symbols.drives.clone(),
            transport,
            names,
            types,
            cables,
            has_reaction,
            pulleys_at,
            re_resolves: 0,
            last: None,
        })
    }

    /// The PLC's reaction-time diagnostic symbol, if the PLC has one (read every cycle into
    /// [`CycleInputs::reaction_cycles`]).
    pub fn reaction_symbol(&self) -> Option<&str> {
        self.has_reaction
            .then(|| self.names[Slot::Reaction.index()].as_str())
    }

    /// The watched symbols ([`PlcSymbols::watched`]) with their types as the PLC declares
    /// them, in the order of [`CycleInputs::watched`].
    pub fn watched(&self) -> impl Iterator<Item = (&str, &IecType)> {
        let watched = self.watched_at..self.drives_at;
        self.names[watched.clone()]
            .iter()
            .map(String::as_str)
            .zip(&self.types[watched])
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
        if self.has_reaction
            && probe(
                &mut self.transport,
                std::slice::from_ref(&self.names[reaction]),
                is_counter,
            )? != Probe::Present
        {
            // The PLC lacks the optional diagnostic now: carry on without it.
            self.names.remove(reaction);
            self.has_reaction = false;
            self.pulleys_at = self.pulleys_at.map(|at| at - 1);
            self.watched_at -= 1;
            self.drives_at -= 1;
        }
        let types = self.transport.resolve(&self.names)?;
        let slots = slots_of(self.has_reaction, self.pulleys_at);
        let at = self.drives_at;
        let cables = check_types(
            &slots,
            &self.names[..at],
            &types[..at],
            self.interference,
            self.watched_at,
        )?;
        check_drive_types(&self.names[at..], &types[at..], &self.drive_symbols, cables)?;
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
        self.reals_at(slot.index(), bytes)
    }

    /// The reals of the resolved name at `index`.
    fn reals_at(&self, index: usize, bytes: &[u8]) -> Result<Vec<f64>, ControllerError> {
        self.decoded_at(index, bytes, wire::decode_reals)
    }

    /// The numbers of the resolved name at `index` (any elementary type), all finite.
    fn numbers_at(&self, index: usize, bytes: &[u8]) -> Result<Vec<f64>, ControllerError> {
        self.decoded_at(index, bytes, wire::decode_numbers)
    }

    /// The values `decode` reads of the resolved name at `index`, all finite.
    fn decoded_at(
        &self,
        index: usize,
        bytes: &[u8],
        decode: fn(&IecType, &[u8]) -> Option<Vec<f64>>,
    ) -> Result<Vec<f64>, ControllerError> {
        let (name, ty) = (&self.names[index], &self.types[index]);
        let values = decode(ty, bytes).ok_or_else(|| ControllerError::Symbol {
            symbol: name.clone(),
            reason: format!("expected {} bytes, got {}", ty.size(), bytes.len()),
        })?;
        all_finite(name, &values)?;
        Ok(values)
    }

    fn scalar(&self, slot: Slot, bytes: &[u8]) -> Result<u32, ControllerError> {
        let ty = &self.types[slot.index()];
        wire::decode_u32(ty, bytes).ok_or_else(|| ControllerError::Symbol {
            symbol: self.names[slot.index()].clone(),
            reason: format!("cannot decode {} bytes as {}", bytes.len(), ty.type_name()),
        })
    }

    fn encode(&self, slot: Slot, values: &[f64]) -> Result<Vec<u8>, ControllerError> {
        let (name, ty) = (&self.names[slot.index()], &self.types[slot.index()]);
        all_finite(name, values)?;
        wire::encode_reals(ty, values).ok_or_else(|| ControllerError::Symbol {
            symbol: name.clone(),
            reason: format!("{} values do not fit {}", values.len(), ty.type_name()),
        })
    }
}

impl<T: Transport> ShadowLink<T> {
    /// The drive symbols written (the shadow's torques, the feed-forward, the axes' stand-in
    /// positions and torques), each in its unit, appended to `items`.
    fn drive_outputs(
        &self,
        out: &ShadowOutputs,
        items: &mut Vec<(usize, Vec<u8>)>,
    ) -> Result<(), ControllerError> {
        let (io, d) = (&self.drive_io, &self.drive_symbols);
        let mut put = |offset: Option<usize>, values: &[f64]| -> Result<(), ControllerError> {
            let Some(offset) = offset else {
                return Ok(());
            };
            let k = self.drives_at + offset;
            let (name, ty) = (&self.names[k], &self.types[k]);
            let bytes =
                wire::encode_numbers(ty, values).ok_or_else(|| ControllerError::Symbol {
                    symbol: name.clone(),
                    reason: format!(
                        "the {} values {values:?} do not fit {}",
                        values.len(),
                        ty.type_name()
                    ),
                })?;
            items.push((k, bytes));
            Ok(())
        };
        put(io.shadow_torques, &out.torques)?;
        put(io.feedforward_torques, &out.feedforward_torques)?;
        if io.axis_positions.is_some() {
            let increments: Vec<f64> = out
                .payouts
                .iter()
                .zip(&d.scaling)
                .map(|(&l, s)| l / s.metres_per_increment)
                .collect();
            put(io.axis_positions, &increments)?;
        }
        if let Some(offset) = io.axis_torques {
            let real = matches!(
                self.types[self.drives_at + offset].scalar,
                Scalar::Real | Scalar::LReal
            );
            let torques: Vec<f64> = match real {
                true => out.torques.clone(),
                false => out
                    .torques
                    .iter()
                    .zip(&d.scaling)
                    .map(|(&t, s)| 1000.0 * t / s.rated_torque)
                    .collect(),
            };
            put(Some(offset), &torques)?;
        }
        Ok(())
    }

    /// One sample's bytes (`wanted` symbols: commands, counter, enable, maybe the reaction
    /// diagnostic, then the watched symbols) in SI.
    fn decode_inputs(&self, inputs: Inputs, wanted: usize) -> Result<Sample, ControllerError> {
        let raw = inputs.values;
        if raw.len() != wanted {
            return Err(ControllerError::Link(format!(
                "sum read returned {} of {wanted} symbols",
                raw.len()
            )));
        }
        let base = if self.has_reaction { 4 } else { 3 };
        let reaction_cycles = match self.has_reaction {
            true => Some(self.scalar(Slot::Reaction, &raw[3])?),
            false => None,
        };
        let watching = self.drives_at - self.watched_at;
        let watched = raw[base..base + watching]
            .iter()
            .zip(self.watched_at..)
            .map(|(bytes, k)| {
                wire::decode_number(&self.types[k], bytes).ok_or_else(|| ControllerError::Symbol {
                    symbol: self.names[k].clone(),
                    reason: format!(
                        "cannot decode {} bytes as {}",
                        bytes.len(),
                        self.types[k].type_name()
                    ),
                })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        // The counter first: a sample whose commands cannot be used still counts its cycle.
        let cycle = self.scalar(Slot::Cycle, &raw[1])?;
        let commanded = match self.reals(Slot::Commanded, &raw[0]) {
            Ok(values) => values,
            Err(error @ ControllerError::NotFinite { .. }) => {
                return Ok(Sample::Unusable {
                    cycle,
                    plc_time: inputs.plc_time,
                    error,
                });
            }
            Err(e) => return Err(e),
        };
        let (actual_torques, actual_lengths) = match self.actuals(&raw[base + watching..]) {
            Ok(actuals) => actuals,
            Err(error @ ControllerError::NotFinite { .. }) => {
                return Ok(Sample::Unusable {
                    cycle,
                    plc_time: inputs.plc_time,
                    error,
                });
            }
            Err(e) => return Err(e),
        };
        Ok(Sample::Usable(CycleInputs {
            commanded_lengths: from_mm(commanded),
            cycle,
            motion_enable: self.scalar(Slot::Enable, &raw[2])? != 0,
            reaction_cycles,
            plc_time: inputs.plc_time,
            watched,
            actual_torques,
            actual_lengths,
        }))
    }

    /// The drives' actual torques (N·m) and payouts (m) in `raw` (the drive symbols read, in
    /// their order), each empty when not read.
    fn actuals(&self, raw: &[Vec<u8>]) -> Result<(Vec<f64>, Vec<f64>), ControllerError> {
        let (io, d) = (&self.drive_io, &self.drive_symbols);
        let mut raw = raw.iter();
        let mut next = |offset: Option<usize>| -> Result<Option<Vec<f64>>, ControllerError> {
            let Some(offset) = offset else {
                return Ok(None);
            };
            let k = self.drives_at + offset;
            let bytes = raw.next().ok_or_else(|| {
                ControllerError::Link(format!("sum read left out {}", self.names[k]))
            })?;
            self.numbers_at(k, bytes).map(Some)
        };
        let torques = next(io.actual_torques)?.map_or_else(Vec::new, |v| {
            v.iter()
                .zip(&d.scaling)
                .map(|(&t, s)| d.actual_torque_unit.to_newton_metres(t, s.rated_torque))
                .collect()
        });
        let lengths = match (next(io.actual_positions)?, &d.actual_positions) {
            (Some(v), Some((_, PositionUnit::Millimetres))) => from_mm(v),
            (Some(v), Some((_, PositionUnit::Increments))) => v
                .iter()
                .zip(&d.scaling)
                .map(|(&n, s)| n * s.metres_per_increment)
                .collect(),
            _ => Vec::new(),
        };
        Ok((torques, lengths))
    }
}

/// Refuses a NaN or an infinity among `values` of `symbol`, naming its element (1-based).
fn all_finite(symbol: &str, values: &[f64]) -> Result<(), ControllerError> {
    match values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        Some((element, &value)) => Err(ControllerError::NotFinite {
            symbol: symbol.to_string(),
            element: element + 1,
            value,
        }),
        None => Ok(()),
    }
}

/// Where each drive symbol sits among the drive symbols (offsets from `drives_at`): the
/// symbols read, then those written, each present when named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct DriveIo {
    actual_torques: Option<usize>,
    actual_positions: Option<usize>,
    shadow_torques: Option<usize>,
    feedforward_torques: Option<usize>,
    axis_positions: Option<usize>,
    axis_torques: Option<usize>,
}

impl DriveIo {
    fn of(d: &DriveSymbols) -> DriveIo {
        let mut at = 0;
        let mut next = |named: bool| {
            named.then(|| {
                at += 1;
                at - 1
            })
        };
        DriveIo {
            actual_torques: next(d.actual_torques.is_some()),
            actual_positions: next(d.actual_positions.is_some()),
            shadow_torques: next(d.shadow_torques.is_some()),
            feedforward_torques: next(d.feedforward_torques.is_some()),
            axis_positions: next(d.axis_positions.is_some()),
            axis_torques: next(d.axis_torques.is_some()),
        }
    }

    /// The offsets of the symbols read, in their order.
    fn read(&self) -> impl Iterator<Item = usize> {
        self.actual_torques.into_iter().chain(self.actual_positions)
    }
}

/// The drive symbols' types: an ARRAY of one number per cable (any elementary type but
/// BOOL); those written in N·m (the shadow's torques, the feed-forward) REAL or LREAL.
fn check_drive_types(
    names: &[String],
    types: &[IecType],
    drives: &DriveSymbols,
    cables: usize,
) -> Result<(), ControllerError> {
    let newton_metres: Vec<&String> = drives
        .shadow_torques
        .iter()
        .chain(&drives.feedforward_torques)
        .collect();
    for (name, ty) in names.iter().zip(types) {
        let real = matches!(ty.scalar, Scalar::Real | Scalar::LReal);
        let reason = if ty.dims.is_empty() || ty.elements() != cables || ty.scalar == Scalar::Bool {
            Some(format!(
                "is {}, expected an ARRAY[1..{cables}] of numbers, one per drive",
                ty.type_name()
            ))
        } else if !real && newton_metres.contains(&name) {
            Some(format!(
                "is {}, expected REAL or LREAL values: the torques go out in N·m",
                ty.type_name()
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(ControllerError::Symbol {
                symbol: name.clone(),
                reason,
            });
        }
    }
    if drives.any() && drives.scaling.len() != cables {
        return Err(ControllerError::Symbol {
            symbol: names.first().cloned().unwrap_or_default(),
            reason: format!(
                "the robot describes {} drives, the controller {cables} cables",
                drives.scaling.len()
            ),
        });
    }
    Ok(())
}

/// What a PLC said about optional symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// All resolve, with the wanted types.
    Present,
    /// Refused (unknown) or of other types.
    Absent,
    /// No answer at all: the link was reopened.
    Silent,
}

/// A UDINT scalar (the reaction diagnostic).
fn is_counter(types: &[IecType]) -> bool {
    matches!(types, [ty] if ty.scalar == Scalar::UDInt && ty.dims.is_empty())
}

/// REAL or LREAL arrays (the pulleys; their sizes are checked with the other symbols').
fn are_real_arrays(types: &[IecType]) -> bool {
    types
        .iter()
        .all(|t| matches!(t.scalar, Scalar::Real | Scalar::LReal) && !t.dims.is_empty())
}

/// Whether the optional `names` resolve to types `fit` accepts. A PLC that does not answer
/// about an unknown name at all (pyads' test server raises and never replies) costs one
/// timeout: the link is reopened — a late reply would desynchronise it — and the shadow
/// carries on without them.
fn probe<T: Transport>(
    transport: &mut T,
    names: &[String],
    fit: fn(&[IecType]) -> bool,
) -> Result<Probe, ControllerError> {
    match transport.resolve(names) {
        Ok(types) if types.len() == names.len() && fit(&types) => Ok(Probe::Present),
        Ok(_) => Ok(Probe::Absent),
        Err(e) if e.is_link() => {
            tracing::info!("no answer about the optional {names:?} ({e}); reopening the link");
            transport.reopen()?;
            Ok(Probe::Silent)
        }
        Err(_) => Ok(Probe::Absent),
    }
}

/// The slot of each resolved name, in order.
fn slots_of(has_reaction: bool, pulleys_at: Option<usize>) -> Vec<Slot> {
    let mut slots = Slot::REQUIRED.to_vec();
    if has_reaction {
        slots.push(Slot::Reaction);
    }
    if pulleys_at.is_some() {
        slots.extend([Slot::PulleyRadii, Slot::PulleyAxes]);
    }
    slots
}

/// Checks the resolved types: REAL or LREAL arrays sized for one cable count (taken from the
/// frame anchors), UDINT counters, a BOOL enable flag. Returns the cable count.
fn check_types(
    slots: &[Slot],
    names: &[String],
    types: &[IecType],
    interference: bool,
    watched_at: usize,
) -> Result<usize, ControllerError> {
    // The watched symbols: one number each.
    for (name, ty) in names.iter().zip(types).skip(watched_at) {
        ty.one_value(name)
            .map_err(|reason| ControllerError::Symbol {
                symbol: name.clone(),
                reason,
            })?;
    }
    let (names, types) = (&names[..watched_at], &types[..watched_at]);
    if interference {
        let (name, ty) = (names.last(), types.last());
        if let (Some(name), Some(ty)) = (name, ty)
            && (ty.scalar != Scalar::Bool || !ty.dims.is_empty())
        {
            return Err(ControllerError::Symbol {
                symbol: name.clone(),
                reason: format!("is {}, expected BOOL", ty.type_name()),
            });
        }
    }
    let types = &types[..types.len() - usize::from(interference)];
    let name_of = |slot: Slot| {
        slots
            .iter()
            .position(|s| *s == slot)
            .map_or_else(String::new, |k| names[k].clone())
    };
    let bad = |slot: Slot, reason: String| ControllerError::Symbol {
        symbol: name_of(slot),
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
    // The robot files' bound, before a byte of the geometry is asked for: the PLC's symbol
    // sizes are the PLC's to say, the memory they would take here is not.
    if cables > MAX_CABLES {
        return Err(bad(
            Slot::FrameAnchors,
            format!(
                "is {}: {cables} cables, more than the {MAX_CABLES} a robot may have",
                anchors.type_name()
            ),
        ));
    }
    for (&slot, ty) in slots.iter().zip(types) {
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
    // The largest request: the geometry in one sum read (a result and a length per item).
    let geometry = [
        Slot::FrameAnchors,
        Slot::PlatformAnchors,
        Slot::Lengths,
        Slot::CableAngles,
        Slot::TcpPose,
    ];
    let bytes: usize = geometry.iter().map(|s| types[s.index()].size() + 8).sum();
    if bytes > wire::MAX_REPLY_LEN {
        return Err(bad(
            Slot::FrameAnchors,
            format!(
                "the robot's {cables} cables take {bytes} bytes of geometry in one sum read, more \
                 than the {} KiB one ADS reply carries here: the robot is too large for the \
                 shadow (with LREAL, about 900 cables)",
                wire::MAX_REPLY_LEN / 1024
            ),
        ));
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
        // The pulleys in the same sum read, when the PLC has them (their place is taken inside:
        // re-resolving may move them).
        let (raw, pulleys_at) = self.with_fresh_handles(|link| {
            let mut indices = slots.map(Slot::index).to_vec();
            if let Some(at) = link.pulleys_at {
                indices.extend([at, at + 1]);
            }
            Ok((link.transport.sum_read(&indices)?, link.pulleys_at))
        })?;
        if raw.len() != slots.len() + if pulleys_at.is_some() { 2 } else { 0 } {
            return Err(ControllerError::Link(format!(
                "sum read returned {} symbols of the geometry",
                raw.len()
            )));
        }
        let v: Vec<Vec<f64>> = slots
            .iter()
            .zip(&raw)
            .map(|(&slot, bytes)| self.reals(slot, bytes))
            .collect::<Result<_, _>>()?;
        let pulleys = match pulleys_at {
            Some(at) => Some(ControllerPulleys {
                radii: from_mm(self.reals_at(at, &raw[slots.len()])?),
                axes: self
                    .reals_at(at + 1, &raw[slots.len() + 1])?
                    .chunks_exact(3)
                    .map(|c| Vector3::new(c[0], c[1], c[2]))
                    .collect(),
            }),
            None => None,
        };
        Ok(ControllerGeometry {
            pulleys,
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

    fn read_samples(&mut self, out: &mut Vec<Sample>) -> Result<(), ControllerError> {
        let all = [Slot::Commanded, Slot::Cycle, Slot::Enable, Slot::Reaction].map(Slot::index);
        // The slot count is taken inside: re-resolving may drop the reaction diagnostic.
        let (batch, wanted) = self.with_fresh_handles(|link| {
            let mut slots = all[..if link.has_reaction { 4 } else { 3 }].to_vec();
            slots.extend(link.watched_at..link.drives_at);
            slots.extend(link.drive_io.read().map(|k| link.drives_at + k));
            let mut batch = Vec::new();
            link.transport.read_inputs(&slots, &mut batch)?;
            Ok((batch, slots.len()))
        })?;
        for inputs in batch {
            let sample = self.decode_inputs(inputs, wanted)?;
            if let Sample::Usable(i) = &sample {
                self.last = Some(i.clone());
            }
            out.push(sample);
        }
        Ok(())
    }

    fn last_sample(&self) -> Option<&CycleInputs> {
        self.last.as_ref()
    }

    fn wait_for_inputs(&mut self, until: std::time::Instant) -> bool {
        self.transport.wait_for_inputs(until)
    }

    fn write_cycle(&mut self, out: &ShadowOutputs) -> Result<(), ControllerError> {
        // The allow-list first, for all four, so that a refused write writes nothing.
        self.access.check()?;
        let pose = pose_to_plc(&out.pose);
        let lengths = to_mm(out.lengths.iter().copied());
        let cycle_slot = Slot::ShadowCycle.index();
        let cycle = wire::encode_u32(&self.types[cycle_slot], out.cycle).ok_or_else(|| {
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
        let mut items = items;
        if self.interference {
            items.push((self.watched_at - 1, vec![u8::from(out.interference)]));
        }
        self.drive_outputs(out, &mut items)?;
        self.with_fresh_handles(|link| link.transport.sum_write(&items))
    }

    fn reconnect(&mut self) -> Result<(), ControllerError> {
        self.transport.reopen()?;
        self.resolve_all()
    }

    fn exchange(&self) -> Option<Exchange> {
        self.transport.exchange()
    }

    fn plc_state(&mut self) -> Result<Option<u16>, ControllerError> {
        self.transport.plc_state()
    }

    fn re_resolves(&self) -> u64 {
        self.re_resolves
    }
}

#[cfg(test)]
mod tests;
