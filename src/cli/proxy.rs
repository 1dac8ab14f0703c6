//! `cdpr proxy`: a plant network rehearsed between a shadow and its PLC (cdpr-ads' `proxy`).

use super::args::warn;
use super::options::RequestArgs;
use super::output::{StatusLine, Table, json};
use anyhow::{Context, Result, anyhow};
use cdpr_ads::exposure::Exposure;
use cdpr_ads::proxy::{DirectionReport, Proxy, ProxyError, ProxyReport};
use cdpr_ads::requests::{AMS_TCP_PORT, ProxyRequest, RunForRequest};
use clap::Args;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
#[command(
    after_help = "Each AMS/TCP frame (the 6-byte header and what it announces) is \
forwarded whole, in order, at its due time: --delay (± --jitter, plus --spike on a --spike-fraction \
of them) after it came, in each direction. Stalls, resets and the black hole count from the first \
connection. The connections, stalls, resets and the black hole are printed on stderr as they \
happen; the figures (frames, bytes, spikes, frames held and swallowed, the time frames spent in the \
proxy) at the end (--duration, Ctrl-C or SIGTERM).\n\n\
Examples:\n  \
cdpr plc --robot uvigo8 --trajectory seed000 --listen 127.0.0.1:48898 &\n  \
cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1:48898 --delay 5ms --jitter 3ms &\n  \
cdpr shadow --plc 127.0.0.1:48900 --ams-net-id 127.0.0.1.1.1 --record run.csv\n  \
cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1 --spike-fraction 0.01 --spike 100ms\n  \
cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1 --stall-every 10s --stall-for 2s\n  \
cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1 --reset-every 5s\n  \
cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1 --blackhole-after 3s"
)]
pub struct ProxyArgs {
    /// Where the shadow connects (its --plc), HOST[:PORT] (ADS's port 48898 by default; port
    /// 0: a free one, printed). Any address but loopback forwards every client that can reach
    /// it to the PLC: a warning says so.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub listen: String,
    /// The PLC, HOST[:PORT] (ADS's port 48898 by default): plain AMS/TCP.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub to: String,
    /// The faults (delay, jitter, spikes, stalls, resets, the black hole) and the seed of the
    /// draws.
    #[command(flatten)]
    pub faults: RequestArgs<ProxyRequest>,
    #[command(flatten)]
    pub run_for: RequestArgs<RunForRequest>,
    /// Print the figures at exit as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The warning of a proxy on a non-loopback --listen address.
const EXPOSURE: Exposure = Exposure {
    option: "--listen",
    what: "the proxy to the PLC",
    protocol: "ADS",
    anyone_can: "read and write the PLC's symbols through it",
    otherwise: "",
};

/// `HOST[:PORT]` as one address (the first the name resolves to), for option `option`.
fn address(text: &str, option: &str) -> Result<SocketAddr> {
    let endpoint = cdpr_ads::shadow::endpoint_on(text, AMS_TCP_PORT);
    endpoint
        .to_socket_addrs()
        .with_context(|| format!("{option} {text}: not an address"))?
        .next()
        .ok_or_else(|| anyhow!("{option} {text}: the name resolves to no address"))
}

pub fn run(a: ProxyArgs) -> Result<ExitCode> {
    let listen = address(&a.listen, "--listen")?;
    let to = address(&a.to, "--to")?;
    if let Some(w) = EXPOSURE.warning(listen) {
        warn(&[w]);
    }
    let faults = a.faults.request.clone();
    let proxy = match Proxy::start(listen, to, faults.clone()) {
        Ok(p) => p,
        Err(ProxyError::Listen { source, .. })
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            anyhow::bail!(
                "cannot listen on {listen}: the port is taken (`ss -ltnp 'sport = :{}'` names \
                 who holds it): pass another --listen",
                listen.port()
            )
        }
        Err(e) => return Err(e.into()),
    };
    // One line on stderr that scripts (and the tests) wait for.
    eprintln!(
        "cdpr proxy: listening on {}, forwarding AMS/TCP to {to}; {}",
        proxy.local_addr(),
        describe(&faults)
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let stop = std::sync::Arc::clone(&stop);
        if let Err(e) =
            ctrlc::set_handler(move || stop.store(true, std::sync::atomic::Ordering::Relaxed))
        {
            warn(&[format!(
                "Ctrl-C and SIGTERM will end the proxy without its figures: {e}"
            )]);
        }
    }
    let started = Instant::now();
    let end = a.run_for.request.end(started);
    let mut status = StatusLine::new();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) && end.is_none_or(|e| Instant::now() < e)
    {
        let wait = end.map_or(Duration::from_millis(100), |e| {
            e.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100))
        });
        let events = proxy.events(wait);
        if !events.is_empty() {
            status.clear();
        }
        for e in events {
            eprintln!("cdpr proxy: {e}");
        }
        status.update(|| {
            let r = proxy.report();
            format!(
                "connections {}, frames {} to the PLC / {} from it, spikes {}, stalls {}, resets {}{}",
                r.connections,
                r.to_plc.frames,
                r.from_plc.frames,
                r.to_plc.spikes + r.from_plc.spikes,
                r.stalls,
                r.resets,
                if r.blackhole_at_s.is_some() {
                    ", black hole"
                } else {
                    ""
                }
            )
        });
    }
    status.clear();
    let report = proxy.stop();
    if a.json {
        json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// The faults asked for, in a few words.
fn describe(f: &ProxyRequest) -> String {
    let ms = |d: Duration| format!("{} ms", cdpr_core::text::short(d.as_secs_f64() * 1e3));
    let s = |d: Duration| format!("{} s", cdpr_core::text::short(d.as_secs_f64()));
    let mut parts = Vec::new();
    if !f.delay.is_zero() || !f.jitter.is_zero() {
        parts.push(format!("delay {} ± {} each way", ms(f.delay), ms(f.jitter)));
    }
    if f.spike_fraction > 0.0 {
        parts.push(format!(
            "{} % of the frames {} later",
            cdpr_core::text::short(f.spike_fraction * 100.0),
            ms(f.spike)
        ));
    }
    if let Some(every) = f.stall_every {
        parts.push(format!("a {} stall every {}", s(f.stall_for), s(every)));
    }
    if let Some(every) = f.reset_every {
        parts.push(format!("a reset every {}", s(every)));
    }
    if let Some(after) = f.blackhole_after {
        parts.push(format!("a black hole after {}", s(after)));
    }
    if parts.is_empty() {
        "no faults".into()
    } else {
        format!("{} (seed {})", parts.join(", "), f.seed)
    }
}

/// The figures as a table.
fn print_report(r: &ProxyReport) {
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.2}", v * 1e3));
    let mut t = Table::new(&["statistic", "to the PLC", "from the PLC"]);
    let both = |f: &dyn Fn(&DirectionReport) -> String| vec![f(&r.to_plc), f(&r.from_plc)];
    let rows: Vec<(&str, Vec<String>)> = vec![
        ("frames", both(&|d| d.frames.to_string())),
        ("bytes", both(&|d| d.bytes.to_string())),
        (
            "time in the proxy p50 / p99 / max [ms]",
            both(&|d| {
                format!(
                    "{} / {} / {}",
                    ms(d.added_p50_s),
                    ms(d.added_p99_s),
                    ms(Some(d.added_max_s))
                )
            }),
        ),
        ("spikes", both(&|d| d.spikes.to_string())),
        ("held by a stall", both(&|d| d.held.to_string())),
        ("swallowed", both(&|d| d.swallowed.to_string())),
    ];
    for (name, cells) in rows {
        let mut row = vec![name.to_string()];
        row.extend(cells);
        t.row(row);
    }
    t.print();
    let mut t = Table::new(&["statistic", "value"]);
    for (name, value) in [
        ("seconds", format!("{:.2}", r.seconds)),
        (
            "connections (PLC unreachable / broken)",
            format!("{} ({} / {})", r.connections, r.refused, r.broken),
        ),
        ("stalls", r.stalls.to_string()),
        (
            "resets (connections reset)",
            format!("{} ({})", r.resets, r.reset_connections),
        ),
        (
            "black hole from [s]",
            r.blackhole_at_s.map_or("-".into(), |s| format!("{s:.3}")),
        ),
    ] {
        t.row(vec![name.to_string(), value]);
    }
    t.print();
}
