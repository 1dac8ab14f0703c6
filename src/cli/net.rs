//! `cdpr discover` and `cdpr route add`: the ADS UDP service (port 48899) from the command
//! line — who is out there, and a route on the PLC for this machine.

use super::options::RequestArgs;
use super::output::{Table, json};
use super::secure::{Mode, SecureArgs};
use anyhow::{Context, Result, bail};
use cdpr_ads::link::{self, RouteRequest, SystemInfo, udp_service};
use cdpr_ads::requests::{DiscoverRequest, RouteAddRequest};
use cdpr_ads::wire::AmsNetId;
use clap::{Args, Subcommand};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(
    long_about = "Find TwinCAT systems (and `cdpr plc`) with the ADS UDP service, port 48899: \
the same question TwinCAT's Add Route dialog asks with Broadcast Search. Each system that answers \
is listed with its address, its AMS NetId (what `cdpr shadow --ams-net-id` and the routes name), \
its host name, TwinCAT version and operating system.\n\n\
Given a HOST, only that system is asked. Without one, the question is broadcast to \
255.255.255.255 and, on Linux, to each local subnet's broadcast address; every answer within \
--timeout is listed.\n\n\
No answer: UDP port 48899 is closed or filtered (Windows firewall, TwinCAT/BSD's pf: allow UDP \
48899 in, and TCP 48898 for ADS itself), the system is not a TwinCAT system, or it is on another \
subnet (a broadcast does not cross routers: give its address). \"Nothing listens on its UDP \
port\": the host is there but runs no TwinCAT router.",
    after_help = "Examples:\n  \
cdpr discover                      # every TwinCAT system on the local subnets\n  \
cdpr discover 192.168.1.10         # just this one: its NetId, name, versions\n  \
cdpr discover 127.0.0.1 --json     # `cdpr plc` on this machine"
)]
pub struct DiscoverArgs {
    /// The system to ask, HOST or HOST:PORT (UDP 48899 by default). Without it: a broadcast
    /// on the local subnets.
    #[arg(value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// How long to wait (cdpr-ads' discover request).
    #[command(flatten)]
    pub wait: RequestArgs<DiscoverRequest>,
    /// Print the systems as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RouteArgs {
    #[command(subcommand)]
    pub command: RouteCommand,
}

#[derive(Subcommand, Debug)]
pub enum RouteCommand {
    /// Add a route for this machine on a TwinCAT PLC (or `cdpr plc`), over UDP 48899, with
    /// the PLC's user name and password.
    Add(RouteAddArgs),
}

#[derive(Args, Debug)]
#[command(
    long_about = "Add a route for this machine on a TwinCAT PLC over the ADS UDP service \
(port 48899), as TwinCAT's Add Route dialog, `adstool addroute` and pyads' add_route_to_plc do. \
TwinCAT serves ADS (TCP 48898) only to AMS NetIds it has a route for; this tells it this \
machine's NetId and address. The PLC checks --user and --password: a Windows user of the PLC \
(factory default Administrator / 1), on TwinCAT/BSD the user set at installation.\n\n\
Answers:\n  \
route added        the PLC now serves this machine's NetId; `cdpr shadow --plc HOST` connects\n  \
user or password   ADS 0x704 (access denied): wrong --user or --password\n  \
no answer          UDP 48899 closed or filtered (firewall, TwinCAT/BSD's pf), or not TwinCAT\n  \
nothing listens    the host is there but runs no TwinCAT router on UDP 48899\n\n\
This machine's NetId: --net-id, else the IPv4 address this machine reaches the PLC from + .1.1 \
(what `cdpr shadow` sends from by default). Its address for the PLC: --host-name, else that IPv4 \
address (an IP is safer than a Windows name the PLC may not resolve).",
    after_help = "Examples:\n  \
cdpr route add --plc 192.168.1.10 --password 1\n  \
cdpr route add --plc 192.168.1.10 --password secret --route-name lab --temporary\n  \
cdpr route add --plc 127.0.0.1 --password 1 --json     # `cdpr plc` on this machine\n  \
cdpr route add --plc 192.168.1.10 --secure ssc --password 1   # Secure ADS, self-signed"
)]
pub struct RouteAddArgs {
    /// The PLC, HOST or HOST:PORT (UDP 48899 by default).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub plc: String,
    /// The PLC's user and how long to wait for its answer (cdpr-ads' route request).
    #[command(flatten)]
    pub route: RequestArgs<RouteAddRequest>,
    /// The PLC user's password (TwinCAT's factory default: 1).
    #[arg(long, value_name = "PASSWORD")]
    pub password: String,
    /// This machine's AMS NetId, the one its ADS clients send from (default: its IPv4 address
    /// toward the PLC + .1.1, what `cdpr shadow --source auto` uses).
    #[arg(long, value_name = "NETID")]
    pub net_id: Option<AmsNetId>,
    /// This machine's address as the PLC should reach it, an IP or host name (default: its
    /// IPv4 address toward the PLC).
    #[arg(long, value_name = "NAME|IP")]
    pub host_name: Option<String>,
    /// The route's name on the PLC (default: --host-name's value).
    #[arg(long, value_name = "NAME")]
    pub route_name: Option<String>,
    /// A temporary route: TwinCAT forgets it at its next restart.
    #[arg(long)]
    pub temporary: bool,
    /// Print the outcome as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// `--secure ssc`: the PLC's certificate to trust, by its SHA-256 fingerprint (read off
    /// the PLC): needed where the PLC's UDP identify, which announces it, does not get through;
    /// also accepts a renewed certificate of a pinned PLC.
    #[arg(long, value_name = "SHA256", requires = "secure")]
    pub accept_fingerprint: Option<String>,
    /// `--secure ssc`: register over Secure ADS instead (TLS, TCP 8016 unless --plc names a
    /// port): this machine's self-signed certificate (made on first use) is sent with --user
    /// and --password, the PLC then knows it by its fingerprint, and the PLC's certificate is
    /// pinned here (trust on first use; compared with the fingerprint the PLC announces over
    /// UDP when it answers). Shared-CA and PSK modes need no route.
    #[command(flatten)]
    pub secure: SecureArgs,
}

#[derive(serde::Serialize)]
struct Discovered<'a> {
    systems: &'a [SystemInfo],
}

pub fn discover(a: DiscoverArgs) -> Result<ExitCode> {
    let systems = match &a.host {
        Some(host) => link::discover(Some(host), a.wait.request.timeout)
            .with_context(|| format!("asking {host} who it is (ADS UDP identify)"))?,
        None => link::discover(None, a.wait.request.timeout)
            .context("broadcasting the ADS UDP identify on the local subnets")?,
    };
    if systems.is_empty() {
        bail!(
            "no TwinCAT system answered the broadcast within {:?} (sent to {}): UDP 48899 may be \
             filtered by a firewall, or the systems are on another subnet (give an address: \
             `cdpr discover HOST`)",
            a.wait.request.timeout,
            udp_service::broadcast_targets()
                .iter()
                .map(|t| t.ip().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if a.json {
        json(&Discovered { systems: &systems })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t =
        Table::new(&["address", "AMS NetId", "host name", "TwinCAT", "OS"]).left(&[0, 1, 2, 3, 4]);
    for s in &systems {
        t.row(vec![
            s.address.ip().to_string(),
            s.net_id.to_string(),
            s.host_name.clone(),
            s.tc_version.map_or("-".into(), |v| v.to_string()),
            s.os.as_ref().map_or("-".into(), |o| o.describe()),
        ]);
    }
    t.print();
    for s in systems.iter().filter(|s| s.fingerprint.is_some()) {
        println!(
            "{} fingerprint: {}",
            s.net_id,
            s.fingerprint.as_deref().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct RouteReport {
    plc: String,
    plc_net_id: String,
    route_name: String,
    net_id: String,
    /// "given" (--net-id) or "local IPv4 + .1.1".
    net_id_from: &'static str,
    host_name: String,
    temporary: bool,
}

pub fn route(a: RouteArgs) -> Result<ExitCode> {
    match a.command {
        RouteCommand::Add(add) => route_add(add),
    }
}

fn route_add(a: RouteAddArgs) -> Result<ExitCode> {
    match a.secure.secure {
        None => {}
        Some(Mode::Ssc) => return secure_route_add(&a),
        Some(m @ (Mode::Sca | Mode::Psk)) => bail!(
            "--secure {} needs no route: {} is the route. Connect directly: `cdpr shadow --plc \
             {} --secure {} …`",
            super::secure::name(m),
            if m == Mode::Sca {
                "a certificate signed by the PLC's CA"
            } else {
                "the PSK entry in the PLC's StaticRoutes.xml"
            },
            a.plc,
            super::secure::name(m)
        ),
    }
    let plc_addr =
        udp_service::resolve_one(&a.plc).with_context(|| format!("finding the PLC `{}`", a.plc))?;
    let local = udp_service::local_ipv4_toward(plc_addr).or_else(udp_service::local_ipv4);
    let (net_id, net_id_from) = own_net_id(a.net_id, local, plc_addr)?;
    let host_name = match (&a.host_name, local) {
        (Some(h), _) => h.clone(),
        (None, Some(ip)) => ip.to_string(),
        (None, None) => bail!("give --host-name: this machine's address as the PLC reaches it"),
    };
    let request = RouteRequest {
        plc: plc_addr.to_string(),
        user: a.route.request.user.clone(),
        password: a.password.clone(),
        net_id,
        host: host_name.clone(),
        route_name: a.route_name.clone(),
        temporary: a.temporary,
        timeout: a.route.request.timeout,
    };
    let added = link::add_route(&request).with_context(|| {
        format!(
            "adding a route for {net_id} ({host_name}) on the PLC at {plc_addr} as user `{}`",
            a.route.request.user
        )
    })?;
    let report = RouteReport {
        plc: added.plc.to_string(),
        plc_net_id: added.plc_net_id.to_string(),
        route_name: added.route_name.clone(),
        net_id: net_id.to_string(),
        net_id_from,
        host_name: host_name.clone(),
        temporary: a.temporary,
    };
    if a.json {
        json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "route `{}` added on the PLC {} at {}{}: it serves ADS to {} at {}",
        report.route_name,
        report.plc_net_id,
        report.plc,
        if a.temporary {
            " (temporary: gone at its restart)"
        } else {
            ""
        },
        report.net_id,
        report.host_name
    );
    if a.net_id.is_none() {
        println!(
            "this machine's NetId {net_id} is its IPv4 address toward the PLC + .1.1 (what `cdpr \
             shadow` sends from by default); --net-id to name another"
        );
    }
    println!(
        "next: cdpr shadow --plc {} --ams-net-id {}",
        plc_addr.ip(),
        report.plc_net_id
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct SecureRouteReport {
    plc: String,
    plc_net_id: String,
    net_id: String,
    mode: &'static str,
    /// This machine's certificate, now known to the PLC.
    client_fingerprint: String,
    /// The PLC's certificate, now pinned here.
    plc_fingerprint: Option<String>,
    /// What the PLC announced over UDP (identify), when it answered.
    announced_fingerprint: Option<String>,
    pins: String,
}

/// This machine's NetId for a route on the PLC at `plc`: `given` (--net-id), else its IPv4
/// address toward the PLC + .1.1 (what `cdpr shadow --source auto` sends from); and which.
fn own_net_id(
    given: Option<AmsNetId>,
    local: Option<std::net::Ipv4Addr>,
    plc: std::net::SocketAddr,
) -> Result<(AmsNetId, &'static str)> {
    match (given, local) {
        (Some(id), _) => Ok((id, "given")),
        (None, Some(ip)) => Ok((AmsNetId::from_ipv4(ip), "local IPv4 + .1.1")),
        (None, None) => bail!(
            "this machine has no IPv4 address toward {plc} to make its NetId from: give \
             --net-id and --host-name"
        ),
    }
}

/// `cdpr route add --secure ssc`: the self-signed registration over TLS.
fn secure_route_add(a: &RouteAddArgs) -> Result<ExitCode> {
    use cdpr_ads::secure;
    let endpoint = cdpr_ads::shadow::endpoint_on(&a.plc, secure::PORT);
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&endpoint)
        .with_context(|| format!("finding the PLC `{endpoint}`"))?
        .next()
        .with_context(|| format!("`{endpoint}` resolves to no address"))?;
    let (net_id, _) = own_net_id(a.net_id, udp_service::local_ipv4_toward(addr), addr)?;
    // TwinCAT announces its certificate's fingerprint in the UDP identify: a PLC met for the
    // first time must present that one, or the credentials are not sent.
    let announced = link::announced_fingerprint(&endpoint, Duration::from_millis(500));
    let host = endpoint
        .rsplit_once(':')
        .map_or(endpoint.as_str(), |(h, _)| h);
    let Some(mut client) = a.secure.client(
        Some((a.route.request.user.clone(), a.password.clone())),
        a.host_name.clone(),
        a.accept_fingerprint.clone(),
    )?
    else {
        bail!("--secure is needed here");
    };
    client.expected_fingerprint = announced.clone();
    // Registering is what was asked for, also where the PLC is pinned already (it may have
    // lost the route).
    client.always_register = true;
    let (own, _) = client.own_self_signed()?;
    let client_fingerprint = secure::fingerprint(&own.cert)?;
    let tcp = std::net::TcpStream::connect_timeout(&addr, a.route.request.timeout)
        .with_context(|| format!("connecting to the PLC's Secure ADS port {endpoint}"))?;
    let session = client
        .connect(tcp, &endpoint, net_id, a.route.request.timeout)
        .with_context(|| {
            format!(
                "registering this machine ({net_id}) on the PLC at {endpoint} as user `{}`",
                a.route.request.user
            )
        })?;
    let report = SecureRouteReport {
        plc: endpoint.clone(),
        plc_net_id: session.plc_net_id.to_string(),
        net_id: net_id.to_string(),
        mode: "ssc",
        client_fingerprint,
        plc_fingerprint: session.plc_fingerprint.clone(),
        announced_fingerprint: announced.clone(),
        pins: client.pins_path()?.display().to_string(),
    };
    if a.json {
        json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    for n in &session.notes {
        println!("{n}");
    }
    println!(
        "Secure ADS route for {net_id} on the PLC {} at {endpoint}: it knows this machine's \
         certificate (SHA-256 {})",
        report.plc_net_id, report.client_fingerprint
    );
    println!(
        "{}",
        match &announced {
            Some(_) => format!(
                "the PLC's certificate is the one it announces over UDP (`cdpr discover {host}`)"
            ),
            None if a.accept_fingerprint.is_some() => {
                "the PLC's certificate is the one --accept-fingerprint names".to_string()
            }
            None => format!(
                "no UDP announcement to compare with: check the PLC's fingerprint above against \
                 the one TwinCAT shows (or `cdpr discover {host}` prints)"
            ),
        }
    );
    println!("next: cdpr shadow --plc {} --secure ssc", a.plc);
    Ok(ExitCode::SUCCESS)
}
