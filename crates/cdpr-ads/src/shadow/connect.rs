//! From "a controller at this address" to a running [`Shadow`]: the one way `cdpr shadow`, the
//! viewer's live mode and the tests connect (endpoint and NetId defaults, the robot file's
//! symbols and allow-list, the transport, the record), and the start line that says what was
//! built.

use super::{CycleTiming, Recorder, Shadow, ShadowConfig, ShadowError};
use crate::link::UdpServiceError;
use crate::link::{
    AdsConfig, AdsController, AdsSource, AdsTransport, Controller, ControllerError, Exchange,
    ExchangeChoice, Interrupt, ShadowLink, WritePolicy,
};
use crate::plc_symbols::PlcSymbols;
use crate::secure::{self, SecureClient};
use crate::wire::{AmsAddr, AmsNetId, udp};
use cdpr_core::robot::{Mechanism, Robot};
use cdpr_core::sim::{ControlMode, SimConfig};
use std::path::PathBuf;
use std::time::Duration;

/// Everything a shadow of a controller over ADS needs.
#[derive(Debug, Clone)]
pub struct ShadowSetup {
    /// The controller's AMS/TCP endpoint, HOST or HOST:PORT (ADS's 48898 by default).
    pub plc: String,
    /// The controller's AMS NetId; `None`: the IPv4 host of `plc` + `.1.1` (TwinCAT's default).
    pub ams_net_id: Option<AmsNetId>,
    /// AMS port of the PLC runtime (TwinCAT 3's first: 851).
    pub ams_port: u16,
    pub source: AdsSource,
    /// Connect, read and write timeout.
    pub timeout: Duration,
    /// How reads and writes travel: `Auto` picks per connection (sum commands by handle, by
    /// address, single requests: the first the PLC serves), anything else is forced.
    pub exchange: ExchangeChoice,
    /// Mass, inertia, stiffness, damping, limits and the `[plc]` symbols; `None`: the template
    /// model and the default symbol names.
    pub robot: Option<Robot>,
    /// Physics, timing, write enable.
    pub config: ShadowConfig,
    /// Record every physics step to this CSV.
    pub record: Option<PathBuf>,
    /// Secure ADS (TLS on TCP 8016, the default port then) in one of its modes; `None`:
    /// plain ADS.
    pub secure: Option<SecureClient>,
    /// The stop request (Ctrl-C, SIGTERM) that ends any wait of the link at once, at start
    /// and in the run.
    pub interrupt: Interrupt,
    /// Symbols read in every sample beside the inputs ([`PlcSymbols::watched`]).
    pub watched: Vec<String>,
}

impl ShadowSetup {
    /// A read-only, free-running shadow of `plc` with the defaults of `cdpr shadow`.
    pub fn new(plc: impl Into<String>) -> ShadowSetup {
        ShadowSetup {
            plc: plc.into(),
            ams_net_id: None,
            ams_port: 851,
            source: AdsSource::Auto,
            timeout: Duration::from_millis(500),
            exchange: ExchangeChoice::Auto,
            robot: None,
            config: ShadowConfig::default(),
            record: None,
            secure: None,
            interrupt: Interrupt::new(),
            watched: Vec::new(),
        }
    }

    /// The setup of a shadow of the controller at `plc` as the link request and the run
    /// request say (`cdpr shadow`'s flags, a test suite's keys): `robot` the file loaded from
    /// the run request's `robot` (None: the template), the physics of `run` with `surrogate`,
    /// plain ADS, read-only until `write` is set.
    pub fn from_requests(
        plc: &str,
        ams_net_id: Option<AmsNetId>,
        link: &crate::requests::LinkRequest,
        run: &cdpr_core::run::RunRequest,
        robot: Option<Robot>,
        surrogate: Option<cdpr_core::sim::SurrogateSetup>,
    ) -> ShadowSetup {
        let timing = match link.cycle {
            crate::requests::Cycle::Free(period) => CycleTiming::Free {
                period,
                plc_period: link.plc_period,
            },
            crate::requests::Cycle::Lockstep => CycleTiming::Lockstep {
                plc_period: link.plc_period,
            },
        };
        ShadowSetup {
            plc: plc.to_string(),
            ams_net_id,
            ams_port: link.ams_port,
            source: link.source,
            timeout: link.timeout,
            exchange: link.exchange,
            robot,
            config: ShadowConfig {
                sim: run.sim_config(cdpr_core::run::CommandSource::Controller, surrogate),
                timing,
                clearance: Some(link.clearance),
                lost_after: link.timeout,
                ..ShadowConfig::default()
            },
            ..ShadowSetup::new(plc)
        }
    }
}

/// A shadow connected to its controller over ADS, and what to tell the user about it.
pub struct Connected {
    pub shadow: Shadow<AdsController>,
    /// host:port.
    pub endpoint: String,
    pub target: AmsAddr,
    /// The controller's NetId and where it came from (given, asked over UDP, guessed).
    pub net_id: NetIdChoice,
    /// The AMS address the shadow talks from (what the PLC's route must name).
    pub source: Option<AmsAddr>,
    /// How reads and writes travel on this connection (picked by its first exchange).
    pub exchange: Option<Exchange>,
    /// One line saying what runs: model, controller, addresses, cycle, writes, record.
    pub banner: String,
    /// What the Secure ADS session has to tell once (a route registered, a certificate
    /// created or pinned).
    pub notes: Vec<String>,
}

/// HOST or HOST:PORT (IPv6 in brackets) → HOST:PORT with ADS's 48898 by default.
pub fn endpoint(plc: &str) -> String {
    endpoint_on(plc, ads::PORT)
}

/// HOST or HOST:PORT → HOST:PORT with `default_port` when none is given (Secure ADS: 8016).
pub fn endpoint_on(plc: &str, default_port: u16) -> String {
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
        format!("{plc}:{default_port}")
    }
}

/// The controller's NetId: `given`, or the IPv4 host of `plc` + .1.1 (TwinCAT's default).
pub fn net_id(plc: &str, given: Option<AmsNetId>) -> Result<AmsNetId, ShadowError> {
    if let Some(id) = given {
        return Ok(id);
    }
    let endpoint = endpoint(plc);
    let host = endpoint
        .rsplit_once(':')
        .map_or(endpoint.as_str(), |(host, _)| host);
    match host.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => Ok(AmsNetId::from_ipv4(ip)),
        Err(_) => Err(ShadowError::Config(format!(
            "--ams-net-id is needed: `{host}` is not an IPv4 address to derive the controller's \
             NetId from (TwinCAT: SYSTEM → Routes → NetId Management)"
        ))),
    }
}

/// Where the controller's NetId came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetIdOrigin {
    /// `--ams-net-id`.
    Given,
    /// The controller's answer to the ADS UDP identify (port 48899).
    Asked,
    /// Nobody answered the identify: the IPv4 host + .1.1 (TwinCAT's default NetId).
    Guessed,
    /// Secure ADS: the NetId in the PLC's TlsConnectInfo answer.
    Secure,
}

/// The controller's NetId and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetIdChoice {
    pub net_id: AmsNetId,
    pub origin: NetIdOrigin,
    /// Where it came from, as the start line says it.
    pub note: String,
}

/// The one rule for the controller's NetId, for `cdpr shadow` and `cdpr view --plc`:
/// `given`; else asked over the ADS UDP service (identify, on the host of `plc`, port 48899,
/// within `timeout`); else, when nobody answers, the IPv4 host of `plc` + .1.1 ([`net_id`]).
pub fn choose_net_id(
    plc: &str,
    given: Option<AmsNetId>,
    timeout: Duration,
) -> Result<NetIdChoice, ShadowError> {
    choose_net_id_until(plc, given, timeout, &Interrupt::new())
}

/// [`choose_net_id`], its UDP wait given up when `interrupt` is raised.
pub fn choose_net_id_until(
    plc: &str,
    given: Option<AmsNetId>,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<NetIdChoice, ShadowError> {
    if let Some(net_id) = given {
        return Ok(NetIdChoice {
            net_id,
            origin: NetIdOrigin::Given,
            note: "NetId given by --ams-net-id".into(),
        });
    }
    let endpoint = endpoint(plc);
    let host = endpoint
        .rsplit_once(':')
        .map_or(endpoint.as_str(), |(host, _)| host);
    let asking = host.to_string();
    let answer = interrupt
        .wait_for(timeout, move || crate::link::net_id_of(&asking, timeout))
        .ok_or(ShadowError::Controller(ControllerError::Interrupted))?;
    let why = match answer {
        Ok(net_id) => {
            return Ok(NetIdChoice {
                net_id,
                origin: NetIdOrigin::Asked,
                note: format!("NetId asked over UDP {host}:{}", udp::UDP_PORT),
            });
        }
        Err(UdpServiceError::NoAnswer { .. }) => format!("no answer within {timeout:?}"),
        Err(UdpServiceError::PortClosed { .. }) => "port closed".into(),
        Err(e) => e.to_string(),
    };
    let asked = format!(
        "nobody answered the ADS UDP identify on {host}:{} ({why})",
        udp::UDP_PORT
    );
    match net_id(plc, None) {
        Ok(net_id) => Ok(NetIdChoice {
            net_id,
            origin: NetIdOrigin::Guessed,
            note: format!(
                "NetId guessed as the --plc address + .1.1: {asked}; give --ams-net-id if it differs"
            ),
        }),
        Err(ShadowError::Config(text)) => Err(ShadowError::Config(format!(
            "{text}; {asked} (`cdpr discover` lists the NetIds of the systems that answer)"
        ))),
        Err(e) => Err(e),
    }
}

/// Refuses what a shadow of a cable robot's controller cannot run.
fn check(setup: &ShadowSetup) -> Result<(), ShadowError> {
    if let Some(r) = setup
        .robot
        .as_ref()
        .filter(|r| r.mechanism != Mechanism::Cables)
    {
        return Err(ShadowError::Config(format!(
            "{} is a {} robot: the ADS shadow reads and drives cable robots (a CDPR's anchors and \
             cable lengths)",
            r.name,
            r.mechanism.kind()
        )));
    }
    let control = setup.config.sim.control;
    if control.command_kind() != ControlMode::Length.command_kind() {
        return Err(ShadowError::Config(format!(
            "--control {} does not fit a shadow: the controller commands lengths, not {}",
            control.name(),
            control.command_kind()
        )));
    }
    Ok(())
}

/// Connects to the controller, resolves the shadow's symbols and starts the shadow (its
/// geometry read, its platform settled); opens the record when asked for.
pub fn connect(setup: &ShadowSetup) -> Result<Connected, ShadowError> {
    check(setup)?;
    let symbols = PlcSymbols {
        watched: setup.watched.clone(),
        ..match &setup.robot {
            Some(r) => PlcSymbols::of(r)?,
            None => PlcSymbols::asking_for_everything(),
        }
    };
    let endpoint = match &setup.secure {
        Some(_) => endpoint_on(&setup.plc, secure::PORT),
        None => endpoint(&setup.plc),
    };
    // Over Secure ADS the PLC says its NetId in its TlsConnectInfo answer.
    let mut net_id = match (&setup.secure, setup.ams_net_id) {
        (Some(s), None) => NetIdChoice {
            net_id: AmsNetId::UNSPECIFIED,
            origin: NetIdOrigin::Secure,
            note: format!(
                "Secure ADS ({}), NetId from the PLC's answer",
                s.mode.name()
            ),
        },
        _ => choose_net_id_until(
            &setup.plc,
            setup.ams_net_id,
            setup.timeout,
            &setup.interrupt,
        )?,
    };
    let mut transport = AdsTransport::connect(AdsConfig {
        endpoint: endpoint.clone(),
        target: AmsAddr::new(net_id.net_id, setup.ams_port),
        source: setup.source,
        timeout: setup.timeout,
        exchange: setup.exchange,
        secure: setup.secure.clone(),
        interrupt: setup.interrupt.clone(),
    })
    .map_err(|source| ShadowError::Connect {
        endpoint: endpoint.clone(),
        source,
    })?;
    let target = transport.target();
    net_id.net_id = target.net_id;
    if let (Some(s), NetIdOrigin::Given) = (&setup.secure, net_id.origin) {
        net_id.note = format!("Secure ADS ({}), {}", s.mode.name(), net_id.note);
    }
    let notes = transport.take_notes();
    let source = transport.source();
    let policy = if setup.config.write {
        WritePolicy::AllowListed
    } else {
        WritePolicy::ReadOnly
    };
    let controller = ShadowLink::connect(transport, &symbols, policy).map_err(|e| {
        // Plain ADS at Secure ADS's port: the PLC took the TLS connection's first bytes
        // for a broken handshake and closed it.
        let tls_port = endpoint.ends_with(&format!(":{}", secure::PORT));
        match resolve_error(&endpoint, target, source, e) {
            ShadowError::NoRoute { cause, .. } if tls_port && setup.secure.is_none() => {
                ShadowError::Target(format!(
                    "{endpoint} answered no ADS request ({cause}): port {} is Secure ADS \
                         (TLS): connect with --secure ssc|sca|psk (or to the plain ADS port \
                         48898)",
                    secure::PORT
                ))
            }
            // Over Secure ADS the PLC accepted this machine in its TlsConnectInfo answer:
            // no route is missing.
            ShadowError::NoRoute { cause, .. } if setup.secure.is_some() => {
                ShadowError::Target(format!(
                    "{endpoint} accepted the Secure ADS connection but answered no ADS \
                         request ({cause}): check that {target} is the PLC's AMS address \
                         (--ams-net-id, --ams-port) and that its PLC runtime runs"
                ))
            }
            other => other,
        }
    })?;
    let mut shadow = Shadow::new(controller, setup.robot.clone(), setup.config.clone())?;
    if let Some(path) = &setup.record {
        let recorder =
            Recorder::create(path, shadow.robot(), shadow.actuals()).map_err(|source| {
                ShadowError::RecordFile {
                    path: path.clone(),
                    source,
                }
            })?;
        shadow.record_to(recorder);
    }
    let banner = banner(&shadow, setup, &endpoint, target, source, &net_id.note);
    Ok(Connected {
        net_id,
        exchange: shadow.controller().exchange(),
        shadow,
        endpoint,
        target,
        source,
        banner,
        notes,
    })
}

/// What a failure of the first requests on a new connection means: no route (the connection
/// closed or silent), a wrong NetId or port (the router's 0x7/0x6), or a symbol problem.
fn resolve_error(
    endpoint: &str,
    target: AmsAddr,
    source: Option<AmsAddr>,
    e: ControllerError,
) -> ShadowError {
    use crate::wire::error::{TARGET_MACHINE_NOT_FOUND, TARGET_PORT_NOT_FOUND};
    match e {
        ControllerError::Broken(text) => ShadowError::Target(format!(
            "{endpoint} answered, but not as an ADS device does ({text}): is it TwinCAT (or \
             `cdpr plc`) on that port?"
        )),
        e if e.is_link() => {
            let cause = match &e {
                ControllerError::Link(text) => text.clone(),
                other => other.to_string(),
            };
            ShadowError::NoRoute {
                endpoint: endpoint.to_string(),
                source_addr: source.map_or("this PC".into(), |s| s.to_string()),
                source_net_id: source.map_or("this PC's".into(), |s| s.net_id.to_string()),
                target,
                cause,
            }
        }
        ControllerError::Ads { code, .. } if code == TARGET_MACHINE_NOT_FOUND => {
            ShadowError::Target(format!(
                "{} is not the AMS NetId of the PLC at {endpoint} (ADS 0x7, target machine not \
                 found): give --ams-net-id as TwinCAT shows it (SYSTEM → Routes → NetId \
                 Management; `cdpr plc`: 127.0.0.1.1.1)",
                target.net_id
            ))
        }
        ControllerError::Ads { code, .. } if code == TARGET_PORT_NOT_FOUND => {
            ShadowError::Target(format!(
                "no ADS device on AMS port {} of {} (ADS 0x6, target port not found): is the \
                 PLC runtime started, and --ams-port right (TwinCAT 3's first runtime: 851)?",
                target.port, target.net_id
            ))
        }
        source => ShadowError::Resolve { target, source },
    }
}

fn banner(
    shadow: &Shadow<AdsController>,
    setup: &ShadowSetup,
    endpoint: &str,
    target: AmsAddr,
    source: Option<AmsAddr>,
    net_id_note: &str,
) -> String {
    let robot = shadow.robot();
    let sim: &SimConfig = &setup.config.sim;
    let exchange = match (shadow.controller().exchange(), setup.exchange) {
        (Some(Exchange::Notify), ExchangeChoice::Auto) => "ADS exchange notify (auto: the PLC \
             sends every sample; each is answered as it comes, in the PLC's next cycle)"
            .to_string(),
        (Some(e), ExchangeChoice::Auto) => format!(
            "ADS exchange {e} (auto: the PLC sends no notifications; polled at least twice \
             per PLC cycle)"
        ),
        (Some(e), c @ ExchangeChoice::Poll) => format!("ADS exchange {e} ({c})"),
        (Some(e), ExchangeChoice::Force(_)) => format!("ADS exchange {e} (forced)"),
        (None, choice) => format!("ADS exchange {choice}"),
    };
    format!(
        "{} ({} cables, {}/{} dt {} ms) of {target} at {endpoint} ({net_id_note}) as {}; {}; {exchange}; {}{}",
        if shadow.start_report().from_file {
            robot.name.as_str()
        } else {
            "template model"
        },
        robot.cable_count(),
        sim.model.name(),
        sim.control.name(),
        sim.dt * 1e3,
        source.map_or("?".into(), |s| s.to_string()),
        match setup.config.timing {
            CycleTiming::Free { period, plc_period } => format!(
                "free-running every {period:?} and at each notified sample, the commands a curve \
                 through the PLC's samples read two PLC periods and a cycle late (the PLC's \
                 period {plc_period:?} until measured)"
            ),
            CycleTiming::Lockstep { plc_period } =>
                format!("lockstep with the PLC counter ({plc_period:?} per cycle)"),
        },
        if setup.config.write {
            "writing the allow-listed symbols"
        } else {
            "read-only"
        },
        setup
            .record
            .as_ref()
            .map(|p| format!("; recording {}", p.display()))
            .unwrap_or_default()
    )
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
    fn robots_with_legs_and_tension_control_are_refused_before_connecting() {
        let mut setup = ShadowSetup::new("127.0.0.1:1");
        setup.robot = Some(cdpr_core::fixtures::robot("keops"));
        let err = connect(&setup).err().expect("refused").to_string();
        assert!(
            err.contains("keops") && err.contains("linear_delta"),
            "{err}"
        );
        setup.robot = None;
        setup.config.sim.control = ControlMode::Tension;
        let err = connect(&setup).err().expect("refused").to_string();
        assert!(err.contains("--control tension"), "{err}");
    }
}
