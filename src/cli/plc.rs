//! `cdpr plc`: the virtual PLC, a TwinCAT stand-in serving ADS on loopback.

use super::args::{RobotArg, warn};
use super::foxglove::{self, FoxgloveArgs};
use super::options::{Played, RequestArgs, RunArgs};
use super::output::{StatusLine, Table, json};
use super::secure::SecureArgs;
use anyhow::{Context, Result, bail};
use cdpr_ads::exposure::Exposure;
use cdpr_ads::live_view::{self, LiveView};
use cdpr_ads::requests::{PlcRequest, RunForRequest};
use cdpr_ads::secure::SecureServer;
use cdpr_ads::server::PlcReport;
use cdpr_ads::server::virtual_plc::PlcError;
use cdpr_ads::server::{
    self, DeviceIdentity, Runtime, RuntimeOptions, ServerConfig, Timing, UdpConfig,
};
use cdpr_ads::wire;
use cdpr_ads::wire::udp::UDP_PORT;
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use clap::Args;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct PlcArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Address to serve AMS/TCP on (default: 127.0.0.1:48898, ADS's port; with --secure
    /// 127.0.0.1:8016, Secure ADS's). Any other address serves every client that can reach
    /// it; over plain ADS without authentication (ADS has none): a warning says so.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// The PLC's identity and timing (its NetId and port, task and NC periods, the hold, the
    /// route's user and password).
    #[command(flatten)]
    pub plc: RequestArgs<PlcRequest>,
    /// What the PLC plays (core's trajectory options: without a trajectory it holds the
    /// robot's home pose).
    #[command(flatten)]
    pub run: RunArgs<Played>,
    #[command(flatten)]
    pub run_for: RequestArgs<RunForRequest>,
    /// Where to answer the ADS UDP service (discovery, add route: `cdpr discover`, `cdpr
    /// route add`, TwinCAT's Add Route dialog, pyads), ADDR:PORT or `off`. Default: the
    /// --listen address, port 48899. When the port is taken (a TwinCAT router, another `cdpr
    /// plc`), the PLC says so and runs without it; a --udp-listen that cannot be had is an
    /// error.
    #[arg(long, value_name = "ADDR:PORT|off", value_parser = parse_udp_listen)]
    pub udp_listen: Option<UdpListen>,
    /// Serve ADS only to AMS NetIds with a route (added over UDP), as TwinCAT does: a frame
    /// from any other NetId closes its connection.
    #[arg(long)]
    pub require_route: bool,
    /// Let ADS clients write every symbol, the PLC's own too (commanded lengths, cycle
    /// counter, geometry, ...), and stop/start the runtime. Without it only the symbols the
    /// shadow writes back (the robot file's `plc.writable`) take writes; the others answer ADS
    /// error 0x704, a stop/start 0x723.
    #[arg(long)]
    pub allow_writes: bool,
    /// Hold the trajectory (start pose, motion disabled) until the first ADS client has
    /// connected; the --hold time then runs from that moment. For starting the PLC and then
    /// the shadow in another terminal without missing the start.
    #[arg(long)]
    pub wait_for_client: bool,
    /// Robots with drives: the robot file (or built-in name) whose drives the PLC simulates
    /// and serves as the real drives' actual torques and positions (`[plc] actual_torques`,
    /// `actual_lengths`): a "real" robot that differs from the shadow's model (another
    /// inertia, friction, mass). Default: the --robot's own drives. Same cables, with drives.
    #[arg(long, value_name = "ROBOT")]
    pub actual_robot: Option<String>,
    /// Print the final statistics as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Run the PLC's tasks at normal priority. By default their thread asks for real-time
    /// scheduling (SCHED_FIFO on Linux, where root, CAP_SYS_NICE or `ulimit -r` allow it), as
    /// a TwinCAT runs its tasks on a real-time core: on a busy machine a normal thread wakes
    /// up to a scheduler tick (4 ms) late, and a 1 ms task runs its cycles late.
    #[arg(long)]
    pub no_realtime: bool,
    /// Serve Secure ADS only (TLS; TwinCAT/BSD's default), in one mode: `ssc` (this PLC's
    /// self-signed certificate, made on first use, its fingerprint printed; clients register
    /// with --route-user/--route-password), `sca` (--cert/--key signed by --ca; clients must
    /// present a certificate signed by it), `psk` (--psk-identity/--psk-password).
    #[command(flatten)]
    pub secure: SecureArgs,
    #[command(flatten)]
    pub foxglove: FoxgloveArgs,
}

/// The warning of a plain-ADS PLC on a non-loopback --listen address.
const EXPOSURE: Exposure = Exposure {
    option: "--listen",
    what: "the virtual PLC",
    protocol: "ADS",
    anyone_can: "read and write its symbols",
    otherwise: " (or --secure)",
};

/// Where the UDP service answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpListen {
    Off,
    At(SocketAddr),
}

fn parse_udp_listen(text: &str) -> Result<UdpListen, String> {
    if text.trim().eq_ignore_ascii_case("off") {
        return Ok(UdpListen::Off);
    }
    text.trim()
        .parse()
        .map(UdpListen::At)
        .map_err(|_| format!("`{text}` is not ADDR:PORT (e.g. 127.0.0.1:48899) or `off`"))
}

pub fn run(a: PlcArgs) -> Result<ExitCode> {
    let (robot, trajectory) = played(&a)?;
    let played = trajectory.duration();
    let (listen, secure) = endpoint(&a)?;
    // The runtime refuses these too; here the message names the options.
    a.plc.request.check()?;
    refuse_oversized_symbols(&robot)?;
    let mut rt = start(&a, &robot, trajectory, listen, secure.clone())?;
    let udp = serve_udp(&a, &mut rt, listen, secure.as_deref())?;
    // One line on stderr that scripts (and the tests) wait for.
    eprintln!(
        "cdpr plc: {} ({} cables) serving ADS on {}{} as {}:{}; PLC task {:?}, NC task {:?}{}{}",
        robot.name,
        robot.cable_count(),
        rt.server.local_addr(),
        secure.as_ref().map_or(String::new(), |s| format!(
            " (Secure ADS, TLS, mode {})",
            s.mode_name()
        )),
        a.plc.request.ams_net_id,
        a.plc.request.ams_port,
        a.plc.request.task,
        a.plc.request.nc,
        match &a.run.request.trajectory {
            Some(t) if a.wait_for_client => {
                format!("; trajectory {t} ({played:.2} s) once a client connects")
            }
            Some(t) => format!("; trajectory {t} ({played:.2} s)"),
            None => "; holding the home pose".into(),
        },
        match &udp {
            Ok(Some(at)) => format!("; ADS UDP service on {at}"),
            Ok(None) => "; ADS UDP service off".into(),
            Err((at, _)) => format!("; no ADS UDP service ({at} taken)"),
        }
    );
    // After the banner, which stays the first line.
    let live = a
        .foxglove
        .start(&robot, "cdpr plc", &live_view::EXTRA, false)?;
    if let Some(v) = &live {
        rt.plc.add_cycle_hook(live_view::plc_hook(
            &robot,
            std::sync::Arc::clone(rt.plc.memory()),
            a.plc.request.task,
            v.sender(),
        )?);
    }
    print_notes(&a, secure.as_deref(), &udp);
    let started = Instant::now();
    let routes_seen = serve(&a, &rt, live.as_ref(), started);
    let live = live.map(LiveView::stop);
    print_routes(&rt, routes_seen);
    let r = rt.finish(started.elapsed().as_secs_f64());
    if a.json {
        json(&r)?;
    } else {
        print_report(&r);
        if let Some(v) = &live {
            foxglove::print_summary(v);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The robot and what its PLC plays: the trajectory sampled at the NC's rate (the set points
/// the axes are fed), or none (the home pose held).
fn played(a: &PlcArgs) -> Result<(Robot, Trajectory)> {
    let robot = a.robot.load_cable_robot("plc")?;
    let trajectory = match &a.run.request.trajectory {
        None => Trajectory::default(),
        Some(spec) => {
            let options = BuiltinOptions {
                dt: a.plc.request.nc.as_secs_f64(),
                ..a.run.request.builtin_options()
            };
            trajectory::load(spec, &robot, &options)
                .map_err(|e| super::args::naming(e, "loading the trajectory", spec))?
        }
    };
    Ok((robot, trajectory))
}

/// Where ADS is served, and Secure ADS's server if asked for: plain ADS on loopback by
/// default, a warning for any other address without it.
fn endpoint(a: &PlcArgs) -> Result<(SocketAddr, Option<Arc<SecureServer>>)> {
    let secure_mode = a.secure.server((
        a.plc.request.route_user.clone(),
        a.plc.request.route_password.clone(),
    ))?;
    let listen = match (a.listen, &secure_mode) {
        (Some(l), _) => l,
        (None, None) => server::DEFAULT_LISTEN.parse()?,
        (None, Some(_)) => SocketAddr::from(([127, 0, 0, 1], cdpr_ads::secure::PORT)),
    };
    if let Some(w) = EXPOSURE.warning(listen).filter(|_| secure_mode.is_none()) {
        warn(&[w]);
    }
    let secure = match secure_mode {
        None => None,
        Some(mode) => Some(Arc::new(
            SecureServer::new(
                mode,
                a.secure.secure_dir.as_deref(),
                a.plc.request.ams_net_id,
            )
            .context("setting up Secure ADS (--secure)")?,
        )),
    };
    Ok((listen, secure))
}

/// A symbol larger than one ADS reply could only be served in part: refused at start.
fn refuse_oversized_symbols(robot: &Robot) -> Result<()> {
    let table = server::SymbolTable::from_robot(robot)?;
    let oversized: Vec<String> = table
        .larger_than(wire::MAX_REPLY_LEN)
        .map(|s| format!("{} ({} bytes)", s.name, s.size()))
        .collect();
    if !oversized.is_empty() {
        bail!(
            "{} ({} cables): {} exceed{} what one ADS read carries ({} bytes); the virtual PLC \
             cannot serve {}. Use a robot with fewer cables.",
            robot.name,
            robot.cable_count(),
            oversized.join(", "),
            if oversized.len() == 1 { "s" } else { "" },
            wire::MAX_REPLY_LEN,
            if oversized.len() == 1 { "it" } else { "them" },
        );
    }
    Ok(())
}

/// The virtual PLC started: its tasks running, ADS served on `listen` (a taken port said as
/// such, with what to do).
fn start(
    a: &PlcArgs,
    robot: &Robot,
    trajectory: Trajectory,
    listen: SocketAddr,
    secure: Option<Arc<SecureServer>>,
) -> Result<Runtime> {
    let request = &a.plc.request;
    let timing = Timing {
        task: request.task,
        nc: request.nc,
        hold: request.hold,
    };
    let identity = DeviceIdentity {
        net_id: request.ams_net_id,
        port: request.ams_port,
        ..server::default_identity()
    };
    let config = ServerConfig {
        require_route: a.require_route,
        secure,
        silent_timeout: request.silent_timeout,
        ..ServerConfig::new(listen)
    };
    let actual_robot = match &a.actual_robot {
        Some(spec) => Some(
            super::args::find_robot(spec)
                .with_context(|| format!("loading the actual robot (--actual-robot {spec})"))?,
        ),
        None => None,
    };
    let options = RuntimeOptions {
        allow_writes: a.allow_writes,
        wait_for_client: a.wait_for_client,
        normal_priority: a.no_realtime,
        actual_robot,
        following_error_window: request.following_error_window,
    };
    match Runtime::start_with(robot, trajectory, timing, identity, config, options) {
        Ok(rt) => Ok(rt),
        Err(PlcError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse => bail!(
            "cannot serve ADS on {listen}: the port is taken (a TwinCAT router, another `cdpr \
             plc` or another server; `ss -ltnp 'sport = :{port}'` names it): stop it, or pass \
             --listen {ip}:PORT (and `cdpr shadow --plc {ip}:PORT`)",
            port = listen.port(),
            ip = listen.ip()
        ),
        Err(e) => {
            Err(anyhow::Error::new(e).context(format!("starting the virtual PLC on {listen}")))
        }
    }
}

/// The ADS UDP service's address, `None` when off, or the default address that was taken.
type Udp = std::result::Result<Option<SocketAddr>, (SocketAddr, std::io::Error)>;

/// The ADS UDP service (discovery, add route) started as asked: at --udp-listen (an error
/// when it cannot be had), off, or at the ADS address's port 48899 when free.
fn serve_udp(
    a: &PlcArgs,
    rt: &mut Runtime,
    listen: SocketAddr,
    secure: Option<&SecureServer>,
) -> Result<Udp> {
    let at = match a.udp_listen {
        Some(UdpListen::Off) => return Ok(Ok(None)),
        Some(UdpListen::At(at)) => at,
        None => SocketAddr::new(listen.ip(), UDP_PORT),
    };
    let udp = rt
        .serve_udp(UdpConfig {
            user: a.plc.request.route_user.clone(),
            password: a.plc.request.route_password.clone(),
            fingerprint: secure.and_then(|s| s.fingerprint().map(str::to_string)),
            ..UdpConfig::new(at)
        })
        .map(Some)
        .map_err(|e| (at, e));
    if let (Some(UdpListen::At(_)), Err((at, e))) = (a.udp_listen, &udp) {
        bail!("the ADS UDP service cannot listen on --udp-listen {at}: {e}");
    }
    Ok(udp)
}

/// The notes after the banner: the certificate, the users and passwords clients need, the
/// UDP service's absence.
fn print_notes(a: &PlcArgs, secure: Option<&SecureServer>, udp: &Udp) {
    if let Some(s) = secure {
        if let Some((path, created)) = &s.certificate {
            eprintln!(
                "cdpr plc: certificate {path}{} SHA-256 fingerprint {}",
                if *created { " (created now)" } else { "" },
                s.fingerprint().unwrap_or("-")
            );
        }
        if s.mode_name() == "ssc" {
            eprintln!(
                "cdpr plc: Secure ADS clients register with user `{}`, password `{}` \
                 (--route-user, --route-password)",
                a.plc.request.route_user, a.plc.request.route_password
            );
        }
    }
    match udp {
        Ok(Some(_)) => eprintln!(
            "cdpr plc: add-route user `{}`, password `{}` (--route-user, --route-password){}",
            a.plc.request.route_user,
            a.plc.request.route_password,
            if a.require_route {
                "; ADS served only to NetIds with a route (--require-route)"
            } else {
                ""
            }
        ),
        Ok(None) => {}
        // Only the default address gets here (a --udp-listen that cannot bind is an error):
        // a note rather than a warning, as the PLC serves ADS as asked.
        Err((at, e)) => eprintln!(
            "cdpr plc: no ADS UDP service (discovery, add route): {at}: {e} (another TwinCAT \
             router or `cdpr plc` holds it; --udp-listen names another address)"
        ),
    }
    if a.require_route && !matches!(udp, Ok(Some(_))) {
        warn(&[
            "--require-route without the UDP service: no route can be added, every ADS \
                client will be refused"
                .into(),
        ]);
    }
}

/// Serves until --duration has passed, Ctrl-C or SIGTERM (which end the run as --duration
/// does: statistics printed, exit 0), with a status line and the routes as they are added;
/// returns the routes printed.
fn serve(a: &PlcArgs, rt: &Runtime, live: Option<&LiveView>, started: Instant) -> usize {
    let mut routes_seen = 0;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    // Kept so that, should the handler not install, waiting forever still waits.
    let _keep = tx.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        let _ = tx.send(());
    }) {
        warn(&[format!(
            "Ctrl-C and SIGTERM will end the PLC without statistics: {e}"
        )]);
    }
    let end = a.run_for.request.end(started);
    let mut status = StatusLine::new();
    loop {
        let wait = end.map_or(Duration::from_millis(250), |e| {
            e.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(250))
        });
        match rx.recv_timeout(wait) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                if end.is_none_or(|e| Instant::now() < e) => {}
            _ => break,
        }
        if rt.routes.list().len() != routes_seen {
            status.clear();
            routes_seen = print_routes(rt, routes_seen);
        }
        status.update(|| {
            let p = rt.plc.stats();
            let server = rt.server.stats();
            format!(
                "PLC cycle {}, late cycles {}, ADS connections {} / frames {}{}{}",
                p.plc_cycles,
                p.late_cycles,
                server
                    .connections
                    .load(std::sync::atomic::Ordering::Relaxed),
                server.frames.load(std::sync::atomic::Ordering::Relaxed),
                if p.finished {
                    ", trajectory played"
                } else {
                    ""
                },
                live.map_or(String::new(), |v| format!(
                    ", {}",
                    foxglove::status(&v.stats())
                ))
            )
        });
    }
    status.clear();
    routes_seen
}

/// The run's statistics as a table.
fn print_report(r: &PlcReport) {
    let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    let mut t = Table::new(&["statistic", "value"]);
    for (name, value) in [
        ("seconds", format!("{:.2}", r.seconds)),
        ("PLC cycles", r.plc_cycles.to_string()),
        (
            "NC ticks (overruns)",
            format!("{} ({})", r.nc_ticks, r.overruns),
        ),
        ("late PLC cycles", r.late_cycles.to_string()),
        ("trajectory finished", r.finished.to_string()),
        ("reaction samples", r.reaction_samples.to_string()),
        (
            "reaction p50 / p99 / max [PLC cycles]",
            format!(
                "{} / {} / {}",
                opt(r.reaction_p50_cycles),
                opt(r.reaction_p99_cycles),
                opt(r.reaction_max_cycles)
            ),
        ),
        ("echoes ahead of the PLC", r.echoes_ahead.to_string()),
        ("motion delay [PLC cycles]", opt(r.motion_delay_cycles)),
        (
            "connections / frames / rejected / evicted",
            format!(
                "{} / {} / {} / {}",
                r.connections, r.frames, r.rejected_connections, r.evicted_connections
            ),
        ),
        (
            "refused / silent / failed handshakes",
            format!(
                "{} / {} / {}",
                r.refused_connections, r.silent_connections, r.failed_handshakes
            ),
        ),
        (
            "routes added / connections without a route",
            format!("{} / {}", r.routes.len(), r.no_route_connections),
        ),
        (
            "notifications dropped (client not reading)",
            r.dropped_notifications.to_string(),
        ),
    ] {
        t.row(vec![name.to_string(), value]);
    }
    if let Some(axes) = &r.axes {
        let max = axes.max_following_error.iter().copied().fold(0.0, f64::max);
        t.row(vec![
            "axes fed by the shadow: cycles / max following error".into(),
            match axes.monitored_cycles {
                0 => "0 / - (no shadow wrote axis positions)".into(),
                n => format!("{n} / {:.3} mm", max * 1e3),
            },
        ]);
        t.row(vec![
            format!(
                "axis error (window {:.3} mm for {} s)",
                axes.window * 1e3,
                axes.filter_time
            ),
            match axes.error {
                Some((axis, cycle)) => format!("0x4550 on axis {axis} at PLC cycle {cycle}"),
                None => "none".into(),
            },
        ]);
    }
    t.print();
}

/// Prints the routes added after the first `seen`; how many there are now.
fn print_routes(rt: &Runtime, seen: usize) -> usize {
    let routes = rt.routes.list();
    for r in routes.iter().skip(seen) {
        eprintln!(
            "cdpr plc: route `{}` added for {} at {}{}",
            r.name,
            r.net_id,
            r.host,
            if r.temporary { " (temporary)" } else { "" }
        );
    }
    routes.len()
}
