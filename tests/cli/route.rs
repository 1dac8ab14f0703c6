//! `cdpr discover` and `cdpr route add` against a `cdpr plc` process, as a user runs them:
//! the ADS UDP service over loopback on a free port; a route added, a wrong password and a
//! port nobody listens on told apart; `--require-route` serving only a routed NetId.

use crate::common::*;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// `cdpr plc` with its UDP service on a free loopback port; the process, its AMS/TCP address
/// and its UDP address (read from its first stderr line).
fn plc_with_udp(extra: &str) -> (Proc, String, String) {
    let (p, addr) = plc(&words(&format!(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen 127.0.0.1:0 --duration 20 {extra}"
    )));
    let udp = p
        .first_line
        .split("ADS UDP service on ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no UDP address in {:?}", p.first_line))
        .to_string();
    (p, addr, udp)
}

#[test]
fn discover_names_the_virtual_plc() {
    let (mut p, _, udp) = plc_with_udp("--ams-net-id 5.6.7.8.1.1");
    let v = json(&["discover", &udp, "--json"]);
    let s = &v["systems"][0];
    assert_eq!(s["net_id"], "5.6.7.8.1.1", "{v}");
    assert_eq!(s["host_name"], "cdpr-vplc", "{v}");
    assert_eq!(s["address"], udp.as_str(), "{v}");
    let o = cdpr(&["discover", &udp]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("5.6.7.8.1.1") && out.contains("3.1.4024"),
        "{out}"
    );
    let _ = p.child.kill();
}

#[test]
fn route_add_succeeds_refuses_a_wrong_password_and_names_a_silent_port() {
    let (p, _, udp) = plc_with_udp("--route-password secret --json");

    // Wrong password: TwinCAT's 0x704, said as such.
    let o = cdpr(&words(&format!(
        "route add --plc {udp} --password 1 --net-id 10.1.2.3.1.1 --host-name 10.1.2.3"
    )));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("0x704") && err.contains("--password"), "{err}");
    // Right password: added, and the PLC lists it.
    let v = json(&words(&format!(
        "route add --plc {udp} --password secret --net-id 10.1.2.3.1.1 --host-name 10.1.2.3 \
         --route-name lab --temporary --json"
    )));
    assert_eq!(v["route_name"], "lab", "{v}");
    assert_eq!(v["plc_net_id"], "127.0.0.1.1.1", "{v}");
    assert_eq!(v["net_id_from"], "given", "{v}");
    // Our NetId by default: this machine's IPv4 toward the PLC + .1.1 (loopback here).
    let o = cdpr(&words(&format!("route add --plc {udp} --password secret")));
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("127.0.0.1.1.1 is its IPv4 address toward the PLC + .1.1")
            && out.contains("--net-id"),
        "{out}"
    );
    p.interrupt();
    let (ok, out, err) = p.finish();
    assert!(ok, "{err}");
    // The credentials printed at start, each route as it is added.
    assert!(err.contains("password `secret`"), "{err}");
    assert!(err.contains("route `lab` added for 10.1.2.3.1.1"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let routes = report["routes"].as_array().expect("routes");
    assert_eq!(routes.len(), 2, "{report}");
    assert_eq!(routes[0]["name"], "lab");
    assert_eq!(routes[0]["net_id"], "10.1.2.3.1.1");
    assert_eq!(routes[0]["temporary"], true);

    // Nobody listens on this UDP port: said so, exit 1, at once.
    let free = UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free port");
    let started = Instant::now();
    let o = cdpr(&words(&format!(
        "route add --plc {free} --password 1 --timeout 3s"
    )));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing listens on its UDP port"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // A host that reads and never answers: no answer within the timeout, the firewall named.
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let addr = silent.local_addr().expect("addr");
    let started = Instant::now();
    let o = cdpr(&words(&format!("discover {addr} --timeout 300ms")));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no answer") && err.contains("firewall"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_udp_listen_address_that_is_taken_is_an_error() {
    let taken = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let at = taken.local_addr().expect("addr");
    let o = cdpr(&words(&format!(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --udp-listen {at} --duration 0"
    )));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("--udp-listen {at}")), "{err}");
}

#[test]
fn require_route_serves_only_a_routed_net_id() {
    // Not 127.0.0.1.1.1: the `ads` crate sends a request for that NetId to its own.
    let (mut p, addr, udp) = plc_with_udp("--require-route --ams-net-id 5.6.7.8.1.1");
    let shadow = |extra: &str| {
        cdpr(&words(&format!(
            "shadow --plc {addr} --ams-net-id 5.6.7.8.1.1 --timeout 300ms --duration 0.3 \
             --source 10.9.9.9.1.1:30000 {extra}"
        )))
    };
    let o = shadow("");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no route for this PC") && err.contains("cdpr route add --plc"),
        "{err}"
    );
    let o = cdpr(&words(&format!(
        "route add --plc {udp} --password 1 --net-id 10.9.9.9.1.1 --host-name 127.0.0.1"
    )));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = shadow("");
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = p.child.kill();
}

/// `cdpr plc` on a loopback address of its own, 127.x.y.z (all of 127/8 is loopback on
/// Linux), so that its UDP service gets port 48899 there — where the shadow asks for the
/// NetId — without meeting the other tests' PLCs; the process and its AMS/TCP address.
fn plc_on_own_loopback(extra: &str) -> (Proc, String) {
    let seed = std::process::id().wrapping_mul(2_654_435_761);
    for k in 0..50u32 {
        let [a, b, c, _] = seed.wrapping_add(k.wrapping_mul(40_503)).to_le_bytes();
        let ip = format!("127.{}.{b}.{}", 10 + a % 200, 2 + c % 250);
        let (mut p, addr) = plc(&words(&format!(
            "--robot uvigo8 --listen {ip}:0 --duration 20 {extra}"
        )));
        if p.first_line
            .contains(&format!("ADS UDP service on {ip}:48899"))
        {
            return (p, addr);
        }
        let _ = p.child.kill();
    }
    panic!("no free 127.x.y.z:48899");
}

#[test]
fn the_shadow_asks_the_plc_for_its_net_id_and_says_so() {
    let (mut p, addr) = plc_on_own_loopback("--ams-net-id 5.6.7.8.1.1");
    let ip = addr.split(':').next().expect("ip");
    let o = cdpr(&words(&format!(
        "shadow --plc {addr} --timeout 2s --duration 0.3"
    )));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "of 5.6.7.8.1.1:851 at {addr} (NetId asked over UDP {ip}:48899)"
        )),
        "{err}"
    );
    let _ = p.child.kill();
    let _ = p.child.wait();
    // Nobody answers on this address: the NetId is guessed, and the start line says why.
    let (mut p, addr) = plc(&words(&format!(
        "--robot uvigo8 --listen {ip}:0 --udp-listen off --ams-net-id {ip}.1.1 --duration 20"
    )));
    let o = cdpr(&words(&format!(
        "shadow --plc {addr} --timeout 2s --duration 0.3"
    )));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "(NetId guessed as the --plc address + .1.1: nobody answered the ADS UDP identify on \
             {ip}:48899 (port closed); give --ams-net-id if it differs)"
        )),
        "{err}"
    );
    let _ = p.child.kill();
}

/// A fresh directory for Secure ADS files.
fn secure_dir(name: &str) -> std::path::PathBuf {
    let d = secure_dir_path(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Where [`secure_dir`] puts `name`.
fn secure_dir_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("cdpr-route-{name}-{}", std::process::id()))
}

/// `cdpr plc --secure ssc` on a loopback address of its own (`127.OCTET.x.y`), its UDP service
/// on that address's port 48899, where the identify goes; the process, its TLS address, the IP.
fn ssc_plc_on_own_address(octet: u8, dir: &str) -> (Proc, String, String) {
    (1..200u8)
        .find_map(|k| {
            let ip = format!("127.{octet}.{}.{k}", std::process::id() % 250);
            let (p, addr) = plc(&words(&format!(
                "--robot uvigo8 --secure ssc --secure-dir {} --listen {ip}:0 --udp-listen \
                 {ip}:48899 --duration 30",
                secure_dir(dir).display()
            )));
            Some((p, addr, ip)).filter(|(p, _, _)| !p.first_line.contains("taken"))
        })
        .expect("a free loopback address")
}

/// `cdpr route add --secure ssc` registers this machine's certificate with the PLC's user and
/// password over TLS, pins the PLC's certificate — checked against the fingerprint the PLC
/// announces in its UDP identify, as TwinCAT 3.1.4024 does — and `cdpr shadow --secure ssc`
/// then connects with no credentials. A wrong password is TwinCAT's TlsConnectInfo error 4.
#[test]
fn secure_route_add_registers_pins_and_lets_the_shadow_in() {
    // The UDP identify goes to port 48899 of the PLC's host: a loopback address of its own.
    let (mut p, addr, ip) = ssc_plc_on_own_address(31, "plc");
    assert!(
        p.first_line.contains("Secure ADS, TLS, mode ssc"),
        "{}",
        p.first_line
    );
    let client = secure_dir("client");
    let dir = client.display().to_string();

    let o = cdpr(&words(&format!(
        "route add --plc {addr} --secure ssc --secure-dir {dir} --password 2"
    )));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("TlsConnectInfo error 4") && err.contains("password"),
        "{err}"
    );
    assert!(
        !client.join("known-plcs").exists(),
        "nothing pinned on a refusal"
    );

    let v = json(&words(&format!(
        "route add --plc {addr} --secure ssc --secure-dir {dir} --password 1 --json"
    )));
    assert_eq!(v["plc_net_id"], "127.0.0.1.1.1", "{v}");
    assert_eq!(v["announced_fingerprint"], v["plc_fingerprint"], "{v}");
    let fp = v["plc_fingerprint"]
        .as_str()
        .expect("a fingerprint")
        .to_string();
    let pins = std::fs::read_to_string(client.join("known-plcs")).expect("pinned");
    assert!(pins.contains(&format!("{addr} {fp}")), "{pins}");

    let s = json(&words(&format!(
        "shadow --plc {addr} --secure ssc --secure-dir {dir} --robot uvigo8 --duration 0.3 --json"
    )));
    assert_eq!(s["secure"], "ssc", "{s}");
    assert!(s["cycles"].as_u64().unwrap_or(0) > 10, "{s}");

    // Shared CA and PSK have no route to add: said, with what to do instead.
    let o = cdpr(&words(&format!(
        "route add --plc {ip} --secure psk --password 1"
    )));
    assert!(stderr(&o).contains("needs no route"), "{}", stderr(&o));
    let _ = p.child.kill();
    let (_, _, plc_err) = p.finish();
    assert!(
        plc_err.contains(&fp),
        "the PLC printed its fingerprint: {plc_err}"
    );
    let _ = std::fs::remove_dir_all(&client);
}

/// The PLC announces one certificate over UDP and presents another over TLS (here: two virtual
/// PLCs on one address, one answering the UDP identify, the other the TLS port): `cdpr route
/// add --secure ssc` sends no credentials to it and pins nothing.
#[test]
fn secure_route_add_refuses_a_certificate_other_than_the_announced_one() {
    let (mut announcer, _, ip) = ssc_plc_on_own_address(33, "announcer");
    let (other, addr) = plc(&words(&format!(
        "--robot uvigo8 --secure ssc --secure-dir {} --listen {ip}:0 --udp-listen off \
         --duration 30",
        secure_dir("other").display()
    )));
    let client = secure_dir("client-mismatch");
    let o = cdpr(&words(&format!(
        "route add --plc {addr} --secure ssc --secure-dir {} --password 1",
        client.display()
    )));
    assert_fails(&o, "not the expected");
    assert_stderr(&o, "nothing was sent");
    assert!(!client.join("known-plcs").exists(), "nothing pinned");
    // The user's own word for the certificate (read off the PLC, here with `openssl x509`)
    // is taken over the UDP one.
    if !cdpr_ads::fixtures::have_openssl("route add --accept-fingerprint") {
        return;
    }
    let printed = cdpr_ads::fixtures::openssl(
        &secure_dir_path("other"),
        &[
            "x509",
            "-in",
            "plc.crt",
            "-noout",
            "-fingerprint",
            "-sha256",
        ],
    );
    let other_fp = String::from_utf8_lossy(&printed)
        .trim()
        .rsplit('=')
        .next()
        .expect("openssl prints NAME=FINGERPRINT")
        .to_string();
    let v = json(&words(&format!(
        "route add --plc {addr} --secure ssc --secure-dir {} --password 1 --accept-fingerprint \
         {other_fp} --json",
        client.display()
    )));
    assert_eq!(v["plc_fingerprint"], other_fp.as_str(), "{v}");
    let _ = announcer.child.kill();
    // Interrupted, the PLC prints its statistics and every route it holds.
    other.interrupt();
    let (_, _, other_err) = other.finish();
    assert_eq!(
        other_err.matches("(Secure ADS)` added for").count(),
        1,
        "one registration, the accepted one: {other_err}"
    );
}
