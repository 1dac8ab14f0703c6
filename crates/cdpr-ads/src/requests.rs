//! The ADS commands' own options as typed requests (core's [`cdpr_core::request!`]): the
//! virtual PLC's identity and timing (`cdpr plc`), the shadow's link (`cdpr shadow`, `cdpr
//! view --plc`), the UDP service's waits (`cdpr discover`, `cdpr route add`), and the faults of
//! a rehearsed plant network (`cdpr proxy`). Each option's unit, range, default and help is
//! written here once; the command line's flags are made from these tables. Times are seconds, given on the command line with their unit
//! (`10ms`, `2s`).

use crate::link::{AdsSource, ExchangeChoice};
use crate::server::udp::{DEFAULT_PASSWORD, DEFAULT_USER};
use crate::wire::{AmsAddr, AmsNetId};
use cdpr_core::options::{
    Group, Kind, Name, OptionError, OptionSpec, OptionValue, Problem, Value, YEAR_S, number, whole,
};
use std::time::Duration;

/// TwinCAT 3's first PLC runtime.
pub const PLC_RUNTIME_PORT: u16 = 851;

/// An AMS NetId is given as its six dotted bytes.
impl OptionValue for AmsNetId {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
        let text = String::from_value(spec, value)?;
        text.parse().map_err(|why: String| {
            spec.error(Problem::WrongType {
                expected: "an AMS NetId (e.g. 127.0.0.1.1.1)",
                given: why,
            })
        })
    }
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

/// The AMS source address: `auto`, `request` or NETID:PORT.
impl std::str::FromStr for AdsSource {
    type Err = String;
    fn from_str(text: &str) -> Result<AdsSource, String> {
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
}

impl std::fmt::Display for AdsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdsSource::Auto => f.write_str("auto"),
            AdsSource::Request => f.write_str("request"),
            AdsSource::Fixed(addr) => write!(f, "{}:{}", addr.net_id, addr.port),
        }
    }
}

cdpr_core::text_value!(AdsSource, ExchangeChoice);

const fn time(min: f64, max: f64, help: &'static str) -> OptionSpec {
    number(Group::Command, "s", min, max, "TIME", help)
}

const fn ams_port() -> OptionSpec {
    whole(
        Group::Command,
        1,
        65535,
        "AMS port of the PLC runtime (851: TwinCAT 3's first PLC runtime)",
    )
    .value_name("PORT")
}

cdpr_core::request! {
    /// `cdpr plc`'s identity and timing.
    #[derive(Debug, Clone, PartialEq)]
    pub struct PlcRequest, table PLC_OPTIONS;
    /// The AMS NetId the PLC answers as.
    ams_net_id: AmsNetId = AmsNetId([127, 0, 0, 1, 1, 1]),
        OptionSpec::new(Group::Command, Kind::Name, "NETID", "AMS NetId the PLC answers as");
    /// The AMS port of its runtime.
    ams_port: u16 = PLC_RUNTIME_PORT, ams_port();
    /// The PLC task's period.
    task: Duration = Duration::from_millis(10),
        time(1e-4, 10.0, "PLC task period (a whole multiple of the NC task's)");
    /// The NC task's period: the set-point rate.
    nc: Duration = Duration::from_millis(2), time(1e-4, 1.0, "NC task period: the set-point rate");
    /// How long the start pose is held before the trajectory runs.
    hold: Duration = Duration::from_millis(200),
        time(1e-3, 3600.0, "time the start pose is held, motion disabled, before the trajectory runs");
    /// The user name an add-route must carry.
    route_user: String = DEFAULT_USER.to_string(),
        OptionSpec::new(Group::Command, Kind::Name, "USER",
            "the user name an add-route must carry (TwinCAT's factory default)");
    /// The password an add-route must carry.
    route_password: String = DEFAULT_PASSWORD.to_string(),
        OptionSpec::new(Group::Command, Kind::Name, "PASSWORD",
            "the password an add-route must carry (TwinCAT's factory default: 1); a wrong one is \
             refused as TwinCAT does (ADS 0x704)");
    /// The emulated axes' following-error window (a robot with drives), m.
    following_error_window: f64 = crate::server::virtual_plc::drives::DEFAULT_WINDOW,
        number(Group::Command, "m", 1e-6, 10.0, "METRES",
            "robots with drives: the following-error window of the axes the shadow may stand in \
             for (TwinCAT's position-lag monitoring: an axis error 0x4550 once |set point − \
             actual| stays above it for 0.02 s). TwinCAT's default is 0.005 m; widen it by the \
             exchange's latency × the axes' top speed");
    /// How long a connection may stay silent before its first frame.
    silent_timeout: Duration = crate::server::tcp::SILENT_TIMEOUT,
        time(0.1, 3600.0, "an ADS or Secure ADS connection that sends no frame within this of \
             opening is closed (a port scanner, a stuck client), its descriptors back to the \
             listeners' budget");
}

impl PlcRequest {
    /// The rule across its times: the PLC task runs every whole number (≥ 1) of NC cycles.
    pub fn check(&self) -> Result<(), OptionError> {
        let nc = self.nc.as_nanos();
        if nc == 0 || self.task < self.nc || !self.task.as_nanos().is_multiple_of(nc) {
            return Err(OptionError {
                option: "task",
                problem: Problem::Against {
                    rule: "a whole multiple (≥ 1) of the NC task's period",
                    other: "nc",
                    given: format!("{:?} with {} {:?}", self.task, Name("nc"), self.nc),
                },
            });
        }
        Ok(())
    }
}

/// A shadow's cycle: free-running at least every period, or in lockstep with the PLC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cycle {
    Free(Duration),
    Lockstep,
}

/// The shortest and longest free-running period, s.
pub const CYCLE_RANGE: (f64, f64) = (1e-4, 1.0);

/// A cycle is a time or `lockstep`.
impl OptionValue for Cycle {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
        let text = match value {
            Value::Text(t) => t,
            other => other.describe(),
        };
        if text.trim().eq_ignore_ascii_case("lockstep") {
            return Ok(Cycle::Lockstep);
        }
        let (min, max) = CYCLE_RANGE;
        match cdpr_core::options::seconds(&text) {
            Some(s) if (min..=max).contains(&s) => Ok(Cycle::Free(Duration::from_secs_f64(s))),
            _ => Err(spec.error(Problem::WrongType {
                expected: "a period from 100µs to 1s (e.g. 2ms), or `lockstep`",
                given: text,
            })),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Cycle::Lockstep => Value::Text("lockstep".into()),
            Cycle::Free(d) => Value::Text(format!(
                "{}ms",
                cdpr_core::text::short(d.as_secs_f64() * 1e3)
            )),
        }
    }
}

cdpr_core::request! {
    /// How the shadow talks to the controller (`cdpr shadow`, `cdpr view --plc`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct LinkRequest, table LINK_OPTIONS;
    /// The AMS port of the PLC runtime.
    ams_port: u16 = PLC_RUNTIME_PORT, ams_port();
    /// Free-running at least every period, or in lockstep with the PLC's cycle counter.
    cycle: Cycle = Cycle::Free(Duration::from_millis(2)),
        OptionSpec::new(Group::Command, Kind::Name, "PERIOD|lockstep",
            "`2ms` (or any period): free-running, physics stepped to the wall clock at least \
             every PERIOD — by notification also as each PLC sample comes, polled at least twice \
             per PLC cycle — the commands a C¹ curve through the PLC's samples on its time line, \
             read two PLC periods and one PERIOD late; `lockstep`: physics advances the PLC's \
             cycle-counter delta × the PLC period along the samples. The period is 100µs to 1s");
    /// The period of the PLC task that increments the cycle counter.
    plc_period: Duration = Duration::from_millis(10),
        time(1e-4, 10.0, "period of the PLC task that increments the cycle counter (seed 003 \
             and `cdpr plc`: 10 ms; TwinCAT: the task's cycle time). Lockstep: the physics time \
             per counter step, checked against the counter's rate; free-running: the commands' \
             latency and horizon, and the samples' spacing while their arrivals agree with it, \
             until the PLC's period is measured (at once from notifications' stamps, polled \
             after 0.1 s)");
    /// The clearance of the interference check at every cycle, m.
    clearance: f64 = cdpr_core::interference::DEFAULT_CLEARANCE, cdpr_core::interference::CLEARANCE;
    /// The ADS timeout (connect, read, write).
    timeout: Duration = Duration::from_millis(500),
        time(1e-2, 60.0, "ADS timeout (connect, read, write): a dead PLC is noticed within it");
    /// The AMS source address.
    source: AdsSource = AdsSource::Auto,
        OptionSpec::new(Group::Command, Kind::Name, "auto|request|NETID:PORT",
            "AMS source address: `auto` (the local IPv4 + .1.1, port 58913: what the PLC's route \
             must name), `request` (ask the router on the other end for one), or NETID:PORT");
    /// How each cycle's reads and writes travel.
    exchange: ExchangeChoice = ExchangeChoice::Auto,
        OptionSpec::new(Group::Command, Kind::Name,
            "auto|poll|notify|sum-handle|sum-address|single",
            "how each cycle's reads and writes travel: `notify` (the inputs by device \
             notification every PLC cycle, with the PLC's time stamp: no cycle missed; geometry \
             and writes polled), `sum-handle` (sum commands 0xF083/0xF081 by handle), \
             `sum-address` (0xF080/0xF081 by the symbols' index group and offset: what pyads' \
             test server serves), `single` (one request per symbol: TwinCAT 2 before 2.11 R2 \
             B2018); `auto` tries `notify` and then takes the first of the others the PLC \
             serves, once per connection; `poll` is `auto` without notifications");
}

cdpr_core::request! {
    /// How long a PLC or a shadow runs (`cdpr plc`, `cdpr shadow`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct RunForRequest, table RUN_FOR_OPTIONS;
    /// Stop after this many seconds (None: until Ctrl-C or SIGTERM).
    duration: Option<f64> = None,
        number(Group::Command, "s", 0.0, YEAR_S, "S",
            "stop after this many seconds and print the statistics (Ctrl-C or SIGTERM end the \
             run the same way)")
            .default_text("until Ctrl-C or SIGTERM");
}

impl RunForRequest {
    /// When a run that started at `started` ends (`None`: when it is stopped). In range by
    /// the option's parser: at most a year.
    pub fn end(&self, started: std::time::Instant) -> Option<std::time::Instant> {
        self.duration.map(|d| started + Duration::from_secs_f64(d))
    }
}

cdpr_core::request! {
    /// `cdpr discover`'s wait.
    #[derive(Debug, Clone, PartialEq)]
    pub struct DiscoverRequest, table DISCOVER_OPTIONS;
    /// How long to wait for answers.
    timeout: Duration = Duration::from_secs(2),
        time(1e-2, 60.0, "how long to wait for answers (a broadcast collects all answers until then)");
}

cdpr_core::request! {
    /// `cdpr route add`'s user and wait.
    #[derive(Debug, Clone, PartialEq)]
    pub struct RouteAddRequest, table ROUTE_OPTIONS;
    /// The PLC's user name.
    user: String = DEFAULT_USER.to_string(),
        OptionSpec::new(Group::Command, Kind::Name, "USER",
            "the PLC's user name (TwinCAT on Windows: a Windows user of the PLC)");
    /// How long to wait for the PLC's answer.
    timeout: Duration = Duration::from_secs(5), time(1e-2, 60.0, "how long to wait for the PLC's answer");
}

/// The AMS/TCP port (plain ADS): what `cdpr proxy` listens on and forwards to by default.
pub const AMS_TCP_PORT: u16 = 48898;

cdpr_core::request! {
    /// `cdpr proxy`'s faults: a plant network between a shadow and its PLC. The times of the
    /// stalls, resets and the black hole count from the first connection.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ProxyRequest, table PROXY_OPTIONS;
    /// Added to every AMS/TCP frame in each direction (a request and its reply: twice).
    delay: Duration = Duration::ZERO,
        time(0.0, 10.0, "time added to every AMS/TCP frame in each direction (a request and \
             its reply: twice), the order of the frames kept as TCP keeps it");
    /// Each frame's delay varies uniformly by up to this either way.
    jitter: Duration = Duration::ZERO,
        time(0.0, 10.0, "each frame's delay varies uniformly within ± this (never below zero; \
             a frame never overtakes the one before it), drawn from --seed");
    /// The fraction of frames delayed by `spike` on top.
    spike_fraction: f64 = 0.0,
        number(Group::Command, "", 0.0, 1.0, "F",
            "fraction of the frames delayed by --spike on top of --delay (drawn from --seed); \
             the frames behind one wait for it");
    /// The delay of a spiked frame.
    spike: Duration = Duration::from_millis(100),
        time(0.0, 60.0, "the extra delay of a --spike-fraction frame")
            .requires("spike_fraction");
    /// A stall starts every this many seconds.
    stall_every: Option<Duration> = None,
        time(1e-3, YEAR_S, "stop forwarding both ways every this long (counted from the first \
             connection) for --stall-for: the frames are held, then delivered in order")
            .default_text("never");
    /// How long a stall lasts.
    stall_for: Duration = Duration::from_secs(2),
        time(1e-3, 3600.0, "how long each --stall-every stall lasts (shorter than --stall-every)")
            .requires("stall_every");
    /// Both connections reset every this many seconds.
    reset_every: Option<Duration> = None,
        time(1e-3, YEAR_S, "reset every open connection every this long (counted from the first \
             connection): both sides closed with a TCP RST, as a switch or firewall dropping the \
             connection does; new connections are forwarded again")
            .default_text("never");
    /// From then on everything is swallowed, both connections kept open.
    blackhole_after: Option<Duration> = None,
        time(0.0, YEAR_S, "from this long after the first connection on, swallow everything in \
             both directions and keep every connection open, new ones too: a peer that vanishes \
             without closing (a pulled cable, a powered-off PLC)")
            .default_text("never");
    /// The seed of the delays' draws.
    seed: u32 = 1,
        whole(Group::Command, 0, u32::MAX as u64,
            "seed of the jitter and the spikes: the same seed, the same delays frame by frame")
            .value_name("SEED");
}

impl ProxyRequest {
    /// The rule across its times: a stall ends before the next one starts.
    pub fn check(&self) -> Result<(), OptionError> {
        match self.stall_every {
            Some(every) if self.stall_for >= every => Err(OptionError {
                option: "stall_for",
                problem: Problem::Against {
                    rule: "shorter than",
                    other: "stall_every",
                    given: format!(
                        "{:?} with {} {:?}",
                        self.stall_for,
                        Name("stall_every"),
                        every
                    ),
                },
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdpr_core::options::Request;

    #[test]
    fn times_take_their_unit_and_the_task_rule_holds() {
        let mut r = PlcRequest::default();
        let task = PlcRequest::spec("task").expect("an option");
        r.set("task", task.parse("20ms").expect("in range"))
            .expect("set");
        assert_eq!(r.task, Duration::from_millis(20));
        assert!(r.check().is_ok());
        r.set(
            "nc",
            PlcRequest::spec("nc")
                .expect("an option")
                .parse("3ms")
                .expect("in range"),
        )
        .expect("set");
        let e = r.check().expect_err("20 ms is not a multiple of 3 ms");
        assert!(
            e.to_string()
                .starts_with("`task`: must be a whole multiple"),
            "{e}"
        );
        assert!(task.parse("20s").is_err(), "beyond 10 s");
        assert!(task.parse("50us").is_err(), "below 100 µs");
        let mut link = LinkRequest::default();
        link.set("cycle", Value::Text("LockStep".into()))
            .expect("lockstep");
        assert_eq!(link.cycle, Cycle::Lockstep);
        link.set("cycle", Value::Text("250us".into()))
            .expect("a period");
        assert_eq!(link.cycle, Cycle::Free(Duration::from_micros(250)));
        assert!(link.set("cycle", Value::Text("2s".into())).is_err());
        assert!(link.set("ams_port", Value::Whole(70000)).is_err());
        link.set("source", Value::Text("192.168.1.50.1.1:32000".into()))
            .expect("NETID:PORT");
        assert_eq!(
            link.source,
            AdsSource::Fixed(AmsAddr::new(AmsNetId([192, 168, 1, 50, 1, 1]), 32000))
        );
        assert_eq!(
            link.get("source"),
            Some(Value::Text("192.168.1.50.1.1:32000".into()))
        );
        assert!(link.set("source", Value::Text("1.2.3:5".into())).is_err());
        link.set("exchange", Value::Text("sum-handle".into()))
            .expect("an exchange");
        assert!(link.set("exchange", Value::Text("smoke".into())).is_err());
        let mut plc = PlcRequest::default();
        assert!(plc.set("ams_net_id", Value::Text("1.2.3".into())).is_err());
        plc.set("ams_net_id", Value::Text("10.0.0.1.1.1".into()))
            .expect("six bytes");
        assert_eq!(plc.ams_net_id.to_string(), "10.0.0.1.1.1");
    }
}

cdpr_core::request! {
    /// `cdpr test`'s outputs and how it runs a suite.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TestRequest, table TEST_OPTIONS;
    /// The JUnit XML file to write.
    junit: Option<std::path::PathBuf> = None,
        OptionSpec::new(Group::Command, Kind::File, "FILE",
            "write the results as JUnit XML (one testsuite per scenario, one testcase per \
             expectation; a failure carries the measured value, the bound and when; the record \
             attached): what Jenkins, GitLab, Azure DevOps and TcUnit-Runner read");
    /// The directory of the Markdown report.
    report: Option<std::path::PathBuf> = None,
        OptionSpec::new(Group::Command, Kind::File, "DIR",
            "write DIR/report.md: every scenario's expectations with what was measured, and a \
             plot (SVG) of each one that failed over time");
    /// Where the scenarios' records go.
    records: Option<std::path::PathBuf> = None,
        OptionSpec::new(Group::Command, Kind::File, "DIR",
            "write each scenario's record (NNN-name.csv, every physics step) here")
            .default_text("REPORT/records with --report, else cdpr-test-records");
    /// Virtual-PLC scenarios run at once.
    jobs: Option<usize> = None,
        whole(Group::Command, 1, 256,
            "run this many virtual-PLC scenarios at once (each is deterministic: the count \
             changes the wall time, never a verdict); PLCs at an address run one at a time")
            .default_text("the machine's cores");
    /// Run only the scenarios whose names contain this.
    filter: Option<String> = None,
        OptionSpec::new(Group::Command, Kind::Name, "TEXT",
            "run only the scenarios whose names contain TEXT");
}

impl TestRequest {
    /// Where the records go: `records`, else the report's `records/`, else
    /// `cdpr-test-records` in the working directory.
    pub fn records_dir(&self) -> std::path::PathBuf {
        match (&self.records, &self.report) {
            (Some(dir), _) => dir.clone(),
            (None, Some(report)) => report.join("records"),
            (None, None) => std::path::PathBuf::from("cdpr-test-records"),
        }
    }

    /// The threads for virtual-PLC scenarios: `jobs`, else the machine's cores.
    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }
}
