//! A virtual PLC serving its memory over ADS: what `cdpr plc` runs, and what it reports.

use super::device::{Device, DeviceIdentity};
use super::memory::PlcMemory;
use super::routes::{Route, RouteTable};
use super::symbols::SymbolTable;
use super::tcp::{Server, ServerConfig};
use super::udp::{UdpConfig, UdpResponder};
use super::virtual_plc::{self, PlcCore, PlcStats, Timing, VirtualPlc};
use crate::wire::AmsNetId;
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::sync::atomic::Ordering;

/// The choices of `cdpr plc` beyond robot, trajectory and timing.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeOptions {
    /// Clients may write the symbols the PLC task owns and stop/start the runtime
    /// (`--allow-writes`); by default only the shadow's allow-listed symbols are writable.
    pub allow_writes: bool,
    /// Hold the trajectory (its start pose, motion disabled) until the first ADS client has
    /// connected; the hold time then runs from that moment (`--wait-for-client`).
    pub wait_for_client: bool,
    /// Run the tasks and the connections' threads at normal priority, not real-time where
    /// the system allows it (`--no-realtime`; [`crate::realtime`]).
    pub normal_priority: bool,
    /// Robots with drives: the robot whose drives the PLC simulates and serves as the real
    /// ones' actual values (`--actual-robot`; `None`: the PLC's own robot), and the emulated
    /// axes' following-error window, m (`--following-error-window`).
    pub actual_robot: Option<Robot>,
    pub following_error_window: f64,
}

impl Default for RuntimeOptions {
    fn default() -> RuntimeOptions {
        RuntimeOptions {
            allow_writes: false,
            wait_for_client: false,
            normal_priority: false,
            actual_robot: None,
            following_error_window: virtual_plc::drives::DEFAULT_WINDOW,
        }
    }
}

/// A virtual PLC serving its memory over ADS: what `cdpr plc` runs.
pub struct Runtime {
    /// Declared first so that they drop first: the servers stop before the tasks.
    pub udp: Option<UdpResponder>,
    pub server: Server,
    pub plc: VirtualPlc,
    /// The routes added over UDP; the server's (`ServerConfig::routes`), shared.
    pub routes: RouteTable,
}

impl Runtime {
    /// Builds the symbol table from `robot`, starts the tasks playing `trajectory` and the
    /// server answering as `identity` on `config.listen`.
    pub fn start(
        robot: &Robot,
        trajectory: Trajectory,
        timing: Timing,
        identity: DeviceIdentity,
        config: ServerConfig,
    ) -> Result<Runtime, virtual_plc::PlcError> {
        Runtime::start_with(
            robot,
            trajectory,
            timing,
            identity,
            config,
            RuntimeOptions::default(),
        )
    }

    /// [`Runtime::start`] with the options of `cdpr plc`: writes to the PLC's own symbols and
    /// WriteControl allowed or not, the trajectory held until a client connects or not. The
    /// PLC task samples the server's data notifications after each cycle.
    pub fn start_with(
        robot: &Robot,
        trajectory: Trajectory,
        timing: Timing,
        identity: DeviceIdentity,
        config: ServerConfig,
        options: RuntimeOptions,
    ) -> Result<Runtime, virtual_plc::PlcError> {
        let memory = PlcMemory::new(SymbolTable::from_robot(robot)?);
        let mut core = PlcCore::new(robot, trajectory, std::sync::Arc::clone(&memory), timing)?;
        if options.actual_robot.is_some()
            || options.following_error_window != virtual_plc::drives::DEFAULT_WINDOW
        {
            core.simulate_drives(
                options.actual_robot.as_ref(),
                options.following_error_window,
            )?;
        }
        let device = Device::new(identity, memory)
            .allow_writes(options.allow_writes)
            .driven_by_plc(timing.task);
        let routes = config.routes.clone();
        // Real-time connections on loopback only: beyond it, a client flooding the PLC with
        // requests would have a real-time thread answering them.
        let config = ServerConfig {
            realtime: !options.normal_priority && config.listen.ip().is_loopback(),
            ..config
        };
        let server = Server::start(config, device)?;
        let hook = server.cycle_hook();
        core.set_cycle_hook(Box::new(move |cycle, stamp| hook.after_cycle(cycle, stamp)));
        if options.wait_for_client {
            let stats = server.shared_stats();
            core.set_start_gate(Box::new(move || {
                stats.connections.load(Ordering::Relaxed) > 0
            }));
        }
        let plc = VirtualPlc::start_scheduled(core, !options.normal_priority)?;
        Ok(Runtime {
            udp: None,
            server,
            plc,
            routes,
        })
    }

    /// Starts answering the ADS UDP service (identify, add route) on `config.listen`, as the
    /// server's NetId, adding routes to [`Runtime::routes`]; where it listens.
    pub fn serve_udp(&mut self, config: UdpConfig) -> std::io::Result<std::net::SocketAddr> {
        let net_id = self.server.device().identity.net_id;
        let responder = UdpResponder::start(config, net_id, self.routes.clone())?;
        let addr = responder.local_addr();
        self.udp = Some(responder);
        Ok(addr)
    }

    /// Stops server and tasks; the PLC's final statistics.
    pub fn stop(self) -> PlcStats {
        let Runtime {
            udp, server, plc, ..
        } = self;
        if let Some(udp) = udp {
            udp.stop();
        }
        server.stop();
        plc.stop()
    }

    /// Stops server and tasks after `seconds` of serving; what `cdpr plc` reports at exit.
    pub fn finish(self, seconds: f64) -> PlcReport {
        let s = self.server.stats();
        let (connections, frames, rejected_connections, evicted_connections) = (
            s.connections.load(Ordering::Relaxed),
            s.frames.load(Ordering::Relaxed),
            s.rejected.load(Ordering::Relaxed),
            s.evicted.load(Ordering::Relaxed),
        );
        let routes = self.routes.list();
        let no_route = s.no_route.load(Ordering::Relaxed);
        let (refused, silent, failed_handshakes) = (
            s.refused.load(Ordering::Relaxed),
            s.silent.load(Ordering::Relaxed),
            s.refused_tls.load(Ordering::Relaxed),
        );
        let dropped_notifications = s.dropped_notifications.load(Ordering::Relaxed);
        let stats = self.stop();
        let r = &stats.reaction;
        PlcReport {
            seconds,
            plc_cycles: stats.plc_cycles,
            nc_ticks: stats.nc_ticks,
            overruns: stats.overruns,
            late_cycles: stats.late_cycles,
            finished: stats.finished,
            reaction_samples: r.samples(),
            reaction_p50_cycles: r.quantile(0.5),
            reaction_p99_cycles: r.quantile(0.99),
            reaction_max_cycles: r.max,
            echoes_ahead: r.ahead,
            motion_delay_cycles: stats.motion_delay_cycles,
            connections,
            frames,
            rejected_connections,
            evicted_connections,
            no_route_connections: no_route,
            refused_connections: refused,
            silent_connections: silent,
            failed_handshakes,
            routes,
            dropped_notifications,
            axes: stats.axes,
        }
    }
}

/// A virtual PLC's run summarised: its tasks, the reaction times it measured (in PLC
/// cycles, seed 003's figure) and its server's traffic. The serde form is `cdpr plc --json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlcReport {
    pub seconds: f64,
    pub plc_cycles: u32,
    pub nc_ticks: u64,
    pub overruns: u64,
    /// PLC cycles that started more than one task period late (run late, not skipped).
    pub late_cycles: u64,
    pub finished: bool,
    pub reaction_samples: u64,
    pub reaction_p50_cycles: Option<u32>,
    pub reaction_p99_cycles: Option<u32>,
    pub reaction_max_cycles: Option<u32>,
    /// Echoes of a cycle the PLC had not run yet (a client writing the counter ahead).
    pub echoes_ahead: u64,
    pub motion_delay_cycles: Option<u32>,
    pub connections: u64,
    pub frames: u64,
    /// Connections closed for a malformed, oversized or truncated frame.
    pub rejected_connections: u64,
    /// Connections closed to make room for a new client when all places were taken.
    pub evicted_connections: u64,
    /// Connections closed because their NetId had no route (`--require-route`).
    pub no_route_connections: u64,
    /// Connections closed at once, unserved: the descriptor budget spent, or too many Secure
    /// ADS handshakes under way.
    pub refused_connections: u64,
    /// Connections closed for sending no frame within the silent timeout.
    pub silent_connections: u64,
    /// Secure ADS handshakes that failed or whose TlsConnectInfo was refused.
    pub failed_handshakes: u64,
    /// The routes added over the UDP service.
    pub routes: Vec<Route>,
    /// Notification frames dropped for clients that did not read them.
    pub dropped_notifications: u64,
    /// A PLC simulating drives: its emulated axes' following errors and monitor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axes: Option<super::virtual_plc::drives::AxisMonitor>,
}

/// The identity a pyads or TwinCAT client expects of a local runtime: 127.0.0.1.1.1, port 851.
pub fn default_identity() -> DeviceIdentity {
    DeviceIdentity {
        net_id: AmsNetId::LOCAL,
        port: 851,
        name: "cdpr vPLC".into(),
    }
}
