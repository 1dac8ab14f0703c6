//! `cdpr shadow`: the live shadow of a TwinCAT controller (or `cdpr plc`) over ADS.

use super::foxglove::{self, FoxgloveArgs};
use super::options::{RequestArgs, RunArgs, Shadow};
use super::output::{StatusLine, Table, json};
use super::secure::SecureArgs;
use anyhow::{Context, Result};
use cdpr_ads::live_view::{self, LiveView, ShadowFeed};
use cdpr_ads::requests::{LinkRequest, RunForRequest};
use cdpr_ads::shadow::{
    self, AnchorSummary, Connected, ShadowReport, ShadowSetup, StartReport, Summary,
};
use cdpr_ads::wire::AmsNetId;
use cdpr_core::run::RunRequest;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
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
TwinCAT side: assets/twincat/README.md in the repository lists the symbols (required and \
optional, types, units), ships the GVL to import and its MAIN snippet, and shows the route the \
PLC needs for this PC.\n\n\
Examples:\n  \
cdpr plc --robot uvigo8 --trajectory seed000 &\n  \
cdpr shadow --plc 127.0.0.1 --ams-net-id 127.0.0.1.1.1 --robot uvigo8 --write --record run.csv --duration 35\n  \
cdpr shadow --plc 192.168.1.10 --ams-net-id 192.168.1.10.1.1 --robot robots/uvigo8.toml   # read-only\n  \
cdpr route add --plc 192.168.1.10 --secure ssc --password 1   # Secure ADS (TLS, 8016): once\n  \
cdpr shadow --plc 192.168.1.10 --secure ssc --robot uvigo8\n  \
CDPR_PSK_PASSWORD=… cdpr shadow --plc 192.168.1.10 --secure psk --psk-identity lab --robot uvigo8"
)]
pub struct ShadowArgs {
    /// The controller's AMS/TCP endpoint, HOST or HOST:PORT (ADS's port 48898 by default).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub plc: String,
    /// The model: --robot for mass, inertia, stiffness, damping, limits and the [plc] symbol
    /// names (the anchors always come from the controller), the physics as `cdpr simulate`
    /// takes it; the winches default to `ideal` (the controller's NC has shaped its set
    /// points already). A step the machine cannot keep up with in real time is not hidden:
    /// the steps skipped to catch up with the controller are counted.
    #[command(flatten)]
    pub run: RunArgs<Shadow>,
    /// No window: `cdpr shadow` always runs headless (`cdpr view --plc` draws the same shadow
    /// in 3D); the flag lets scripts say so.
    #[arg(long)]
    pub headless: bool,
    #[command(flatten)]
    pub run_for: RequestArgs<RunForRequest>,
    /// Print the statistics at exit as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub foxglove: FoxgloveArgs,
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
    /// The link's port, cycle, PLC period, clearance and timeout (cdpr-ads' link request).
    #[command(flatten)]
    pub options: RequestArgs<LinkRequest>,
    /// Write pose, cable lengths, tensions and the cycle echo back to the controller (only the
    /// symbols on the robot file's [plc] writable list). Without it nothing is written.
    #[arg(long, requires = "plc")]
    pub write: bool,
    /// Record every physics step to this file: `.csv` (`cdpr simulate --out`'s columns, then
    /// plc_cycle, enable and the flags rejected and gap) or `.mcap` (the same numbers on /run,
    /// the pose, the 3D scene and the cycle statistics: opens in Foxglove, Lichtblick,
    /// PlotJuggler).
    #[arg(long, value_name = "FILE", requires = "plc")]
    pub record: Option<PathBuf>,
    /// Run the shadow's cycles at normal priority. By default their thread asks for
    /// real-time scheduling (SCHED_FIFO on Linux, where root, CAP_SYS_NICE or `ulimit -r`
    /// allow it; else normal priority, and the statistics say why): on a busy machine a normal
    /// thread wakes up to a scheduler tick (4 ms) late, four cycles of a 1 ms PLC task.
    #[arg(long)]
    pub no_realtime: bool,
    #[command(flatten)]
    pub secure: SecureArgs,
    /// `--secure ssc`: the PLC's user, to register this machine's certificate on the first
    /// connection (as `cdpr route add --secure ssc` does); later connections need none.
    #[arg(long, value_name = "USER", requires = "secure_password", help_heading = SECURE_HEADING)]
    pub secure_user: Option<String>,
    /// `--secure ssc`: the password of --secure-user (TwinCAT's factory default: 1).
    #[arg(long, value_name = "PASSWORD", requires = "secure_user", help_heading = SECURE_HEADING)]
    pub secure_password: Option<String>,
    /// The host name sent to the PLC in the TlsConnectInfo (default: this machine's
    /// certificate's common name, else its host name); a shared-CA PLC compares it with the
    /// certificate's CN.
    #[arg(long, value_name = "NAME", requires = "secure", help_heading = SECURE_HEADING)]
    pub secure_host_name: Option<String>,
    /// `--secure ssc`: the PLC's certificate to accept, by its fingerprint (SHA-256, as the
    /// error or `cdpr discover` printed it): a renewed certificate replaces the pin; on a first
    /// connection any other certificate is refused before anything is sent.
    #[arg(long, value_name = "SHA256", requires = "secure", help_heading = SECURE_HEADING)]
    pub accept_fingerprint: Option<String>,
    /// `--secure sca`: the common name the PLC's certificate must carry. Without it any
    /// certificate the CA signed is taken as the PLC's, a laptop's too.
    #[arg(long, value_name = "CN", requires = "secure", help_heading = SECURE_HEADING)]
    pub plc_cn: Option<String>,
}

const SECURE_HEADING: &str = "Secure ADS (TLS 1.2 on TCP 8016; TwinCAT 3.1.4024 and later)";

/// What the shadow models: the robot file (or the template), the physics.
impl LinkArgs {
    /// The Secure ADS setup (`None`: plain ADS). Registering (`--secure-user`), a PLC met for
    /// the first time must present the certificate it announces over UDP, as with `cdpr
    /// route add`.
    fn secure_client(&self, plc: &str) -> Result<Option<cdpr_ads::secure::SecureClient>> {
        let register = self.secure_user.clone().zip(self.secure_password.clone());
        let registering = register.is_some();
        let options = cdpr_ads::secure::SecureOptions {
            secure_host_name: self.secure_host_name.clone(),
            accept_fingerprint: self.accept_fingerprint.clone(),
            plc_cn: self.plc_cn.clone(),
            ..self.secure.options()
        };
        let mut client = self.secure.client_with(options, register)?;
        if let Some(c) = client.as_mut().filter(|_| registering) {
            let endpoint = shadow::endpoint_on(plc, cdpr_ads::secure::PORT);
            c.expected_fingerprint = cdpr_ads::link::announced_fingerprint(
                &endpoint,
                self.options.request.timeout.min(Duration::from_millis(500)),
            );
        }
        Ok(client)
    }

    /// The library's setup for a shadow of the controller at `plc` running `choice`.
    pub fn setup(&self, plc: &str, request: &RunRequest) -> Result<ShadowSetup> {
        let robot = request
            .robot
            .is_some()
            .then(|| super::args::load_robot(request))
            .transpose()?;
        let (surrogate, warnings) = request.load_surrogate(robot.as_ref())?;
        super::args::warn(&warnings);
        let mut setup = ShadowSetup::from_requests(
            plc,
            self.ams_net_id,
            &self.options.request,
            request,
            robot,
            surrogate,
        );
        setup.secure = self.secure_client(plc)?;
        setup.config.write = self.write;
        setup.config.realtime = !self.no_realtime;
        setup.record = self.record.clone();
        Ok(setup)
    }
}

pub fn run(a: ShadowArgs) -> Result<ExitCode> {
    // In range by its parser (at most a year).
    let duration = a.run_for.request.duration.map(Duration::from_secs_f64);
    // A record of a type cdpr does not write is refused before the PLC is asked.
    if let Some(path) = &a.link.record {
        cdpr_core::recording::RecordFormat::of(path)?;
    }
    let setup = a.link.setup(&a.plc, &a.run.request)?;
    // Before connecting: Ctrl-C, SIGTERM or SIGHUP end the run within a fraction of a second
    // whatever the link waits for (the interrupt shuts its sockets down), with its record
    // finished and its statistics, instead of killing it.
    let interrupt = setup.interrupt.clone();
    {
        let interrupt = interrupt.clone();
        if let Err(e) = ctrlc::set_handler(move || interrupt.raise()) {
            eprintln!("warning: Ctrl-C will not stop the shadow cleanly: {e}");
        }
    }
    let Connected {
        mut shadow,
        banner,
        notes,
        ..
    } = match shadow::connect(&setup) {
        Ok(c) => c,
        Err(_) if interrupt.raised() => {
            eprintln!("cdpr shadow: interrupted before the shadow started; nothing recorded");
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(e.into()),
    };
    for n in notes {
        eprintln!("cdpr shadow: {n}");
    }
    // One line on stderr that scripts (and the tests) wait for.
    eprintln!("cdpr shadow: {banner}");
    if !a.json {
        print_start(shadow.start_report());
    }
    let live = a
        .foxglove
        .start(shadow.robot(), "cdpr shadow", &live_view::EXTRA, true)?;
    let mut feed = live.as_ref().map(|v| ShadowFeed::new(v.sender()));
    let started = Instant::now();
    // The duration's end stops the run as a signal does: a request blocked at that moment (a
    // stalled PLC, a long --timeout) does not hold it past its end.
    if let Some(d) = duration {
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            std::thread::sleep(d);
            interrupt.raise();
        });
    }
    let mut status = StatusLine::new();
    let outcome = shadow::run_with(&mut shadow, duration, interrupt.flag(), |shadow, _| {
        if let Some(feed) = feed.as_mut() {
            feed.after_cycle(shadow);
        }
        status.update(|| {
            let s = shadow.stats();
            format!(
                "simulated {:.1} s, {} cycles, p99 {}, {}reconnects {}, gaps {}, overruns {}{}{}",
                shadow.time(),
                s.cycles,
                s.cycle
                    .quantile(0.99)
                    .map_or("-".into(), |v| format!("{:.2} ms", v * 1e3)),
                match (shadow.is_linked(), shadow.is_stalled()) {
                    (false, _) => "PLC LOST, ",
                    (true, true) => "NO SAMPLES, ",
                    (true, false) => "",
                },
                s.reconnects,
                s.gaps,
                s.overruns,
                torque_error(s),
                live.as_ref().map_or(String::new(), |v| format!(
                    ", {}",
                    foxglove::status(&v.stats())
                ))
            )
        });
    });
    status.clear();
    let live = live.map(LiveView::stop);
    let wall = started.elapsed().as_secs_f64();
    let summary = shadow.summary();
    if a.json {
        let report = ShadowReport {
            live_view: live,
            ..ShadowReport::new(
                &shadow,
                &setup,
                wall,
                outcome.as_ref().err().map(|e| e.to_string()),
            )
        };
        json(&report)?;
    } else {
        print_summary(&summary, wall, shadow.time());
        if let Some(v) = &live {
            foxglove::print_summary(v);
        }
        if let Some(path) = &a.link.record {
            println!("wrote {}", path.display());
        }
    }
    outcome.context("the shadow stopped")?;
    Ok(ExitCode::SUCCESS)
}

/// The status line's torque prediction: the drive predicted worst so far (RMS), with the
/// lag that best aligns it; nothing when the controller gives no actual torques.
fn torque_error(s: &cdpr_ads::shadow::ShadowStats) -> String {
    if s.torque_prediction.pushes() == 0 {
        return String::new();
    }
    let errors = s.torque_prediction.errors();
    errors
        .iter()
        .max_by(|a, b| a.rms.total_cmp(&b.rms))
        .map_or(String::new(), |e| {
            format!(
                ", torque error RMS {:.3} N·m ({:.1} %, drive {}, lag {:.0} ms)",
                e.rms,
                e.rms_percent.unwrap_or(f64::NAN),
                e.drive,
                e.best_lag_s * 1e3
            )
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
    let xyz = |m: &[f64; 3]| format!("{:.3} {:.3} {:.3}", m[0], m[1], m[2]);
    for d in s.anchors.iter().map(AnchorSummary::from) {
        t.row(vec![
            format!("{} ({})", d.cable, d.name),
            format!("{:?}", d.anchor).to_lowercase(),
            xyz(&d.file_mm),
            xyz(&d.controller_mm),
            format!("{:.3}", d.distance_mm),
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
        (
            "ADS exchange",
            s.exchange.map_or("-".into(), |e| e.to_string()),
        ),
        (
            "interference cycles (now)",
            format!(
                "{} ({})",
                s.interference_cycles,
                if s.interference.is_empty() {
                    "none".to_string()
                } else {
                    s.interference.join("; ")
                }
            ),
        ),
        (
            "samples (most in a cycle) / missed PLC cycles",
            format!(
                "{} ({}) / {}",
                s.samples, s.samples_per_cycle_max, s.missed_plc_cycles
            ),
        ),
        (
            "late samples (longest ahead) [ms]",
            format!("{} ({:.2})", s.late_samples, s.late_max_s * 1e3),
        ),
        (
            "command latency [ms]",
            format!("{:.1}", s.command_latency_s * 1e3),
        ),
        (
            "scheduling",
            s.scheduling.clone().unwrap_or_else(|| "-".into()),
        ),
        ("rejected samples", s.rejected.to_string()),
        (
            "reconnects / re-resolves / gaps",
            format!("{} / {} / {}", s.reconnects, s.re_resolves, s.gaps),
        ),
        (
            "stalls (PLC in STOP) / time without samples [s]",
            format!(
                "{} ({}) / {:.3}",
                s.stalls, s.plc_stops, s.without_samples_s
            ),
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
    for line in cdpr_core::run::digest::drive_table(&s.drives) {
        println!("{line}");
    }
    if !s.torque_prediction.is_empty() {
        println!("the shadow's torques against the drives' own (actual − predicted):");
        for line in cdpr_core::run::prediction::prediction_table(&s.torque_prediction) {
            println!("{line}");
        }
    }
    if let Some(worst) = s
        .length_prediction
        .iter()
        .max_by(|a, b| a.rms.total_cmp(&b.rms))
    {
        println!(
            "payouts against the drives' positions: RMS up to {:.3} mm (drive {} {}), max {:.3} mm",
            worst.rms * 1e3,
            worst.drive,
            worst.name,
            s.length_prediction
                .iter()
                .map(|e| e.max)
                .fold(0.0, f64::max)
                * 1e3
        );
    }
}
