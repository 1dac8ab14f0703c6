//! `cdpr shadow`: the live shadow of a TwinCAT controller (or `cdpr plc`) over ADS.

use super::output::{Table, json};
use super::plc::parse_duration;
use anyhow::{Context, Result, bail};
use cdpr_ads::plc::{
    AdsConfig, AdsController, AdsSource, AdsTransport, AmsAddr, AmsNetId, ShadowLink, WritePolicy,
};
use cdpr_ads::shadow::{self, CycleTiming, Recorder, Shadow, ShadowConfig, StartReport, Summary};
use cdpr_core::robot::{PlcSymbols, Robot};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
#[command(
    after_help = "The model is built from the controller's geometry (seed 000's automatic \
generation): its frame and platform anchors, the platform resting where its commanded lengths hold \
it (searched from its TCP pose). Mass, inertia, stiffness, damping and limits come from --robot, else \
from a template: a 1 kg cuboid over the platform anchors, k = 20000 N/m, c = 50 N·s/m, tensions \
1–100 N, seed 003's winch limits (3 m/s, 15 m/s², 22.5 m/s³). With --robot, every anchor that differs \
from the controller's is listed in mm; the controller's are used.\n\n\
Each cycle: one ADS sum read (commanded lengths, cycle counter, enable), the physics stepped at --dt to \
the controller's time, one sum write (pose, lengths, tensions, counter echo) — the write only with \
--write, and only to symbols on the robot file's [plc] writable list.\n\n\
Examples:\n  \
cdpr plc --robot uvigo8 --trajectory seed000 &\n  \
cdpr shadow --plc 127.0.0.1 --ams-net-id 127.0.0.1.1.1 --robot uvigo8 --write --record run.csv --duration 35\n  \
cdpr shadow --plc 192.168.1.10 --ams-net-id 192.168.1.10.1.1 --robot robots/uvigo8.toml   # read-only"
)]
pub struct ShadowArgs {
    /// The controller's AMS/TCP endpoint, HOST or HOST:PORT (ADS's port 48898 by default).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub plc: String,
    /// Robot file (or a shipped robot's name) for mass, inertia, stiffness, damping, limits and
    /// the [plc] symbol names; the anchors always come from the controller.
    #[arg(long, short = 'r', value_name = "ROBOT")]
    pub robot: Option<String>,
    /// Physics step, s.
    #[arg(long, default_value_t = 0.001, value_name = "S")]
    pub dt: f64,
    /// Physical model (chain: seed 000's Rapier joint chains; elastic: platform-only, fast).
    #[arg(long, value_enum, default_value = "chain")]
    pub model: ModelKind,
    /// Winches: `ideal` follows the controller's set points exactly (its NC has shaped them
    /// already); `length` adds a PID drive with the robot's limits.
    #[arg(long, value_enum, default_value = "ideal")]
    pub control: ControlMode,
    /// No window: `cdpr shadow` always runs headless (`cdpr view --plc` draws the same shadow
    /// in 3D); the flag lets scripts say so.
    #[arg(long)]
    pub headless: bool,
    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Print the statistics at exit as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub link: LinkArgs,
}

/// How the shadow talks to the controller: shared by `cdpr shadow` and `cdpr view --plc`.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Controller link (cdpr shadow, cdpr view --plc)")]
pub struct LinkArgs {
    /// AMS NetId of the controller (TwinCAT: SYSTEM → Routes → NetId Management; `cdpr plc`:
    /// 127.0.0.1.1.1). Default: the --plc address + .1.1 when it is an IPv4 address (TwinCAT's
    /// default NetId).
    #[arg(long, value_name = "NETID", requires = "plc")]
    pub ams_net_id: Option<AmsNetId>,
    /// AMS port of the PLC runtime (851: TwinCAT 3's first PLC runtime).
    #[arg(long, default_value_t = 851, value_name = "PORT")]
    pub ams_port: u16,
    /// `2ms` (or any period): free-running, physics stepped to the wall clock; `lockstep`: physics
    /// advances the PLC's cycle-counter delta × --plc-period.
    #[arg(long, default_value = "2ms", value_parser = parse_cycle, value_name = "PERIOD|lockstep")]
    pub cycle: CycleArg,
    /// Lockstep: period of the PLC task that increments the cycle counter (seed 003 and
    /// `cdpr plc`: 10 ms; TwinCAT: the task's cycle time). Checked against the counter's rate.
    #[arg(long, default_value = "10ms", value_parser = parse_duration, value_name = "TIME")]
    pub plc_period: Duration,
    /// Write pose, cable lengths, tensions and the cycle echo back to the controller (only the
    /// symbols on the robot file's [plc] writable list). Without it nothing is written.
    #[arg(long, requires = "plc")]
    pub write: bool,
    /// Record every physics step to this CSV: `cdpr simulate --out`'s columns, then plc_cycle,
    /// enable and the flags rejected and gap.
    #[arg(long, value_name = "CSV", requires = "plc")]
    pub record: Option<PathBuf>,
    /// AMS source address: `auto` (the local IPv4 + .1.1, port 58913: what the PLC's route
    /// must name), `request` (ask the router on the other end for one), or NETID:PORT.
    #[arg(long, default_value = "auto", value_parser = parse_source, value_name = "auto|request|NETID:PORT")]
    pub source: AdsSource,
    /// ADS timeout (connect, read, write): a dead PLC is noticed within it.
    #[arg(long, default_value = "500ms", value_parser = parse_duration, value_name = "TIME")]
    pub timeout: Duration,
}

/// What [`open`] needs beyond the link: the robot file and the physics.
pub struct ShadowSetup<'a> {
    pub plc: &'a str,
    pub robot: Option<&'a str>,
    pub dt: f64,
    pub model: ModelKind,
    pub control: ControlMode,
}

/// A shadow connected to its controller, and what to tell the user about it.
pub struct Opened {
    pub shadow: Shadow<AdsController>,
    /// Shown by the viewer's live panel (`cdpr shadow` prints the banner instead).
    #[cfg_attr(not(feature = "viewer"), allow(dead_code))]
    pub endpoint: String,
    #[cfg_attr(not(feature = "viewer"), allow(dead_code))]
    pub target: AmsAddr,
    pub timing: CycleTiming,
    /// The one stderr line scripts (and the tests) wait for.
    pub banner: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CycleArg {
    Free(Duration),
    Lockstep,
}

fn parse_cycle(text: &str) -> Result<CycleArg, String> {
    if text.trim().eq_ignore_ascii_case("lockstep") {
        return Ok(CycleArg::Lockstep);
    }
    parse_duration(text)
        .map(CycleArg::Free)
        .map_err(|e| format!("{e}, or `lockstep`"))
}

fn parse_source(text: &str) -> Result<AdsSource, String> {
    match text.trim() {
        "auto" => Ok(AdsSource::Auto),
        "request" => Ok(AdsSource::Request),
        other => {
            let (id, port) = other
                .rsplit_once(':')
                .ok_or_else(|| format!("`{other}` is not auto, request or NETID:PORT"))?;
            let port: u16 = port
                .parse()
                .map_err(|_| format!("`{port}` is not an AMS port"))?;
            Ok(AdsSource::Fixed(AmsAddr::new(id.parse()?, port)))
        }
    }
}

/// HOST or HOST:PORT (IPv6 in brackets) → HOST:PORT with ADS's 48898 by default.
pub fn endpoint(plc: &str) -> String {
    let plc = plc.trim();
    let has_port = match plc.rsplit_once(':') {
        Some((host, port)) => {
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.contains(':') || host.ends_with(']'))
        }
        None => false,
    };
    if has_port {
        plc.to_string()
    } else {
        format!("{plc}:{}", ads::PORT)
    }
}

/// The controller's NetId: given, or the IPv4 host of `plc` + .1.1 (TwinCAT's default).
fn net_id(plc: &str, given: Option<AmsNetId>) -> Result<AmsNetId> {
    if let Some(id) = given {
        return Ok(id);
    }
    let endpoint = endpoint(plc);
    let host = endpoint
        .rsplit_once(':')
        .map_or(endpoint.as_str(), |(host, _)| host);
    match host.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => {
            let [a, b, c, d] = ip.octets();
            Ok(AmsNetId([a, b, c, d, 1, 1]))
        }
        Err(_) => bail!(
            "--ams-net-id is needed: `{host}` is not an IPv4 address to derive the controller's \
             NetId from (TwinCAT: SYSTEM → Routes → NetId Management)"
        ),
    }
}

/// Connects to the controller, resolves the shadow's symbols and starts the shadow (its
/// geometry read, its platform settled); the record is opened when asked for.
pub fn open(setup: &ShadowSetup, link: &LinkArgs) -> Result<Opened> {
    let file = setup
        .robot
        .map(|r| Robot::load(r).with_context(|| format!("loading robot `{r}`")))
        .transpose()?;
    if let Some(r) = file.as_ref().filter(|r| !r.is_cable_robot()) {
        bail!(
            "{} is a {} robot: the ADS shadow reads and drives cable robots (a CDPR's anchors and \
             cable lengths)",
            r.name,
            super::args::kind_name(r)
        );
    }
    if setup.control == ControlMode::Tension {
        bail!("--control tension does not fit a shadow: the controller commands lengths");
    }
    let timing = match link.cycle {
        CycleArg::Free(period) => CycleTiming::Free { period },
        CycleArg::Lockstep => CycleTiming::Lockstep {
            plc_period: link.plc_period,
        },
    };
    let config = ShadowConfig {
        sim: SimConfig {
            dt: setup.dt,
            model: setup.model,
            control: setup.control,
            ..SimConfig::default()
        },
        timing,
        write: link.write,
        ..ShadowConfig::default()
    };
    let symbols = file
        .as_ref()
        .map_or_else(PlcSymbols::defaults, |r| r.plc.clone());
    let endpoint = endpoint(setup.plc);
    let target = AmsAddr::new(net_id(setup.plc, link.ams_net_id)?, link.ams_port);
    let transport = AdsTransport::connect(AdsConfig {
        endpoint: endpoint.clone(),
        target,
        source: link.source,
        timeout: link.timeout,
    })
    .with_context(|| {
        format!(
            "connecting to the PLC at {endpoint} (a real TwinCAT needs a route for this PC: see assets/twincat/README.md)"
        )
    })?;
    let source = transport.source();
    let policy = if link.write {
        WritePolicy::AllowListed
    } else {
        WritePolicy::ReadOnly
    };
    let controller = ShadowLink::connect(transport, &symbols, policy)
        .with_context(|| format!("resolving the shadow's symbols on {target}"))?;
    let mut shadow = Shadow::new(controller, file, config).context("starting the shadow")?;
    if let Some(path) = &link.record {
        let recorder = Recorder::create(path, shadow.robot().cable_count())
            .with_context(|| format!("creating {}", path.display()))?;
        shadow.record_to(recorder);
    }
    let robot = shadow.robot();
    let banner = format!(
        "{} ({} cables, {}/{} dt {} ms) of {target} at {endpoint} as {}; {}; {}{}",
        if shadow.start_report().from_file {
            robot.name.as_str()
        } else {
            "template model"
        },
        robot.cable_count(),
        setup.model.name(),
        setup.control.name(),
        setup.dt * 1e3,
        source.map_or("?".into(), |s| s.to_string()),
        match timing {
            CycleTiming::Free { period } => format!("free-running every {period:?}"),
            CycleTiming::Lockstep { plc_period } =>
                format!("lockstep with the PLC counter ({plc_period:?} per cycle)"),
        },
        if link.write {
            "writing the allow-listed symbols"
        } else {
            "read-only"
        },
        link.record
            .as_ref()
            .map(|p| format!("; recording {}", p.display()))
            .unwrap_or_default()
    );
    Ok(Opened {
        shadow,
        endpoint,
        target,
        timing,
        banner,
    })
}

pub fn run(a: ShadowArgs) -> Result<ExitCode> {
    let duration = match a.duration {
        Some(s) if s.is_finite() && s >= 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--duration must be a non-negative number of seconds, got {s}"),
        None => None,
    };
    let setup = ShadowSetup {
        plc: &a.plc,
        robot: a.robot.as_deref(),
        dt: a.dt,
        model: a.model,
        control: a.control,
    };
    let Opened {
        mut shadow,
        timing,
        banner,
        ..
    } = open(&setup, &a.link)?;
    // One line on stderr that scripts (and the tests) wait for.
    eprintln!("cdpr shadow: {banner}");
    if !a.json {
        print_start(shadow.start_report());
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed)) {
            eprintln!("warning: Ctrl-C will not stop the shadow cleanly: {e}");
        }
    }
    let started = Instant::now();
    let outcome = shadow::run(&mut shadow, duration, &stop);
    let wall = started.elapsed().as_secs_f64();
    let summary = shadow.summary();
    if a.json {
        let mut v = serde_json::to_value(&summary)?;
        if let Some(map) = v.as_object_mut() {
            map.insert("wall_s".into(), json!(wall));
            map.insert("simulated_s".into(), json!(shadow.time()));
            map.insert("model".into(), json!(a.model));
            map.insert("control".into(), json!(a.control));
            map.insert("dt".into(), json!(a.dt));
            map.insert(
                "cycle".into(),
                json!(match timing {
                    CycleTiming::Free { period } => format!("{}ms", period.as_secs_f64() * 1e3),
                    CycleTiming::Lockstep { .. } => "lockstep".into(),
                }),
            );
            map.insert("write".into(), json!(a.link.write));
            map.insert("record".into(), json!(a.link.record));
            map.insert("start".into(), start_json(shadow.start_report()));
            map.insert(
                "anchors".into(),
                anchors_json(&shadow.start_report().anchors),
            );
            map.insert(
                "error".into(),
                json!(outcome.as_ref().err().map(|e| e.to_string())),
            );
        }
        json(&v)?;
    } else {
        print_summary(&summary, wall, shadow.time());
        if let Some(path) = &a.link.record {
            println!("wrote {}", path.display());
        }
    }
    outcome.context("the shadow stopped")?;
    Ok(ExitCode::SUCCESS)
}

fn mm3(v: &[f64; 3]) -> [f64; 3] {
    v.map(|x| x * 1e3)
}

fn anchors_json(anchors: &[shadow::AnchorDifference]) -> serde_json::Value {
    json!(
        anchors
            .iter()
            .map(|d| json!({
                "cable": d.cable,
                "name": d.name,
                "anchor": d.anchor,
                "file_mm": mm3(&d.file),
                "controller_mm": mm3(&d.controller),
                "distance_mm": d.distance * 1e3,
            }))
            .collect::<Vec<_>>()
    )
}

fn start_json(s: &StartReport) -> serde_json::Value {
    json!({
        "cables": s.cables,
        "from_file": s.from_file,
        "tcp_pose": s.tcp_pose.to_array(),
        "start_pose": s.start_pose.to_array(),
        "sag_m": s.sag,
        "fk_position_offset_m": s.consistency.fk_position_offset,
        "angle_mismatch_rad": s.consistency.angle_mismatch,
        "plc_cycle": s.plc_cycle,
        "reaction_diagnostic": s.reaction_diagnostic,
    })
}

pub fn print_start(s: &StartReport) {
    let p = s.start_pose.position * 1e3;
    println!(
        "start: platform at rest at ({:.3}, {:.3}, {:.3}) mm, {:.3} mm from the controller's TCP pose (sag of the commanded lengths)",
        p.x,
        p.y,
        p.z,
        s.sag * 1e3
    );
    if s.anchors.is_empty() {
        if s.from_file {
            println!("anchors: the robot file and the controller agree (within 0.01 mm)");
        }
        return;
    }
    println!(
        "anchors that differ from the robot file ({}; the controller's are used):",
        s.anchors.len()
    );
    let mut t = Table::new(&[
        "cable",
        "anchor",
        "file x y z [mm]",
        "controller x y z [mm]",
        "|Δ| [mm]",
    ]);
    let xyz = |v: &[f64; 3]| {
        let m = mm3(v);
        format!("{:.3} {:.3} {:.3}", m[0], m[1], m[2])
    };
    for d in &s.anchors {
        t.row(vec![
            format!("{} ({})", d.cable, d.name),
            format!("{:?}", d.anchor).to_lowercase(),
            xyz(&d.file),
            xyz(&d.controller),
            format!("{:.3}", d.distance * 1e3),
        ]);
    }
    t.print();
}

pub fn print_summary(s: &Summary, wall: f64, simulated: f64) {
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.3}", v * 1e3));
    let cycles = |v: Option<u32>| v.map_or("-".into(), |v| v.to_string());
    let mut t = Table::new(&["statistic", "value"]);
    for (name, value) in [
        (
            "wall / simulated [s]",
            format!("{wall:.2} / {simulated:.2}"),
        ),
        ("cycles (polls)", format!("{} ({})", s.cycles, s.polls)),
        (
            "cycle p50 / p99 / max [ms]",
            format!(
                "{} / {} / {}",
                ms(s.cycle_p50_s),
                ms(s.cycle_p99_s),
                ms(Some(s.cycle_max_s))
            ),
        ),
        (
            "  ADS p50 / p99 [ms]",
            format!("{} / {}", ms(s.io_p50_s), ms(s.io_p99_s)),
        ),
        (
            "  physics p50 / p99 [ms]",
            format!("{} / {}", ms(s.physics_p50_s), ms(s.physics_p99_s)),
        ),
        ("rejected samples", s.rejected.to_string()),
        (
            "reconnects / gaps",
            format!("{} / {}", s.reconnects, s.gaps),
        ),
        (
            "reaction p50 / p99 / max [PLC cycles]",
            format!(
                "{} / {} / {}",
                cycles(s.reaction_cycles),
                cycles(s.reaction_p99_cycles),
                cycles(s.reaction_max_cycles)
            ),
        ),
        (
            "overruns / skipped steps",
            format!("{} / {}", s.overruns, s.skipped_steps),
        ),
        ("physics resets", s.physics_resets.to_string()),
    ] {
        t.row(vec![name.to_string(), value]);
    }
    t.print();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_the_ads_port_unless_given() {
        assert_eq!(endpoint("192.168.1.10"), "192.168.1.10:48898");
        assert_eq!(endpoint("127.0.0.1:5000"), "127.0.0.1:5000");
        assert_eq!(endpoint("plc.local"), "plc.local:48898");
        assert_eq!(endpoint("[::1]:5000"), "[::1]:5000");
        assert_eq!(endpoint("[::1]"), "[::1]:48898");
    }

    #[test]
    fn the_net_id_defaults_to_an_ipv4_host_plus_1_1() {
        let id = |plc: &str| net_id(plc, None).map_err(|e| e.to_string());
        assert_eq!(id("192.168.1.10"), Ok(AmsNetId([192, 168, 1, 10, 1, 1])));
        assert_eq!(id("127.0.0.1:5000"), Ok(AmsNetId([127, 0, 0, 1, 1, 1])));
        let given = AmsNetId([5, 6, 7, 8, 1, 1]);
        assert_eq!(net_id("plc.local", Some(given)).ok(), Some(given));
        let err = id("plc.local").expect_err("a host name gives no NetId");
        assert!(
            err.contains("--ams-net-id") && err.contains("plc.local"),
            "{err}"
        );
    }

    #[test]
    fn cycles_and_sources_parse() {
        assert_eq!(
            parse_cycle("2ms"),
            Ok(CycleArg::Free(Duration::from_millis(2)))
        );
        assert_eq!(parse_cycle("Lockstep"), Ok(CycleArg::Lockstep));
        assert!(parse_cycle("often").unwrap_err().contains("lockstep"));
        assert_eq!(parse_source("auto"), Ok(AdsSource::Auto));
        assert_eq!(
            parse_source("192.168.1.50.1.1:32000"),
            Ok(AdsSource::Fixed(AmsAddr::new(
                AmsNetId([192, 168, 1, 50, 1, 1]),
                32000
            )))
        );
        assert!(parse_source("1.2.3:5").is_err());
    }
}
