//! The crates.io `ads` client against the virtual PLC's server on loopback: what a Rust
//! TwinCAT client sees.

use ads::client::{ReadRequest, WriteRequest};
use cdpr_ads::fixtures::*;
use std::time::Duration;

/// How long to wait for a notification before failing the test as hung (they come every
/// 10 ms): a hang guard, not a speed figure.
const HUNG: Duration = Duration::from_secs(30);

#[test]
fn the_ads_state_and_device_info_are_the_virtual_plcs() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let (state, dev_state) = dev.get_state().expect("read state");
    assert!(matches!(state, ads::AdsState::Run), "{state:?}");
    assert_eq!(dev_state, 0);
    let info = dev.get_info().expect("device info");
    assert_eq!(info.name, "cdpr vPLC");
    assert_eq!((info.major, info.minor, info.version), (3, 1, 4024));
}

#[test]
fn read_by_handle_gives_the_robot_files_anchors_in_mm() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let h = ads::Handle::new(dev, "GVL_Shadow.aFrameAnchors").expect("handle");
    let mut buf = [0u8; 8 * 24];
    h.read(&mut buf).expect("read");
    let a = f64s(&buf);
    let robot = uvigo8();
    for (cable, c) in robot.cables.iter().enumerate() {
        for k in 0..3 {
            assert_eq!(
                a[cable * 3 + k],
                c.frame_anchor[k] * 1000.0,
                "cable {cable} axis {k}"
            );
        }
    }
    // An element, as TwinCAT allows: row 2, column 3 = z of the second anchor.
    let e = ads::Handle::new(dev, "gvl_shadow.aFrameAnchors[2,3]").expect("element handle");
    let z: f64 = f64::from_le_bytes({
        let mut b = [0u8; 8];
        e.read(&mut b).expect("read element");
        b
    });
    assert_eq!(z, 825.0);
}

#[test]
fn write_by_handle_then_read_back_by_location() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let h = ads::Handle::new(dev, "GVL_Shadow.aShadowTensions").expect("handle");
    let tensions: Vec<u8> = (1..=8)
        .flat_map(|k| (k as f64 * 1.5).to_le_bytes())
        .collect();
    h.write(&tensions).expect("write");
    let (ig, io) = ads::symbol::get_location(dev, "GVL_Shadow.aShadowTensions").expect("0xF007");
    assert_eq!(ig, 0x4040);
    assert_eq!(
        ads::symbol::get_size(dev, "GVL_Shadow.aShadowTensions").expect("size"),
        64
    );
    let mut back = [0u8; 64];
    dev.read_exact(ig, io, &mut back).expect("read by address");
    assert_eq!(back.to_vec(), tensions);
}

#[test]
fn sum_read_of_the_per_cycle_inputs() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let handles: Vec<ads::Handle> = [
        "GVL_Shadow.aCmdLengths",
        "GVL_Shadow.nCycle",
        "GVL_Shadow.bMotionEnable",
    ]
    .iter()
    .map(|n| ads::Handle::new(dev, n).expect("handle"))
    .collect();
    let (mut l, mut n, mut e) = ([0u8; 64], [0u8; 4], [0u8; 1]);
    let mut reqs = [
        ReadRequest::new(0xF005, handles[0].raw(), &mut l),
        ReadRequest::new(0xF005, handles[1].raw(), &mut n),
        ReadRequest::new(0xF005, handles[2].raw(), &mut e),
    ];
    dev.read_multi(&mut reqs).expect("sum read");
    let lengths = f64s(reqs[0].data().expect("lengths"));
    assert_eq!(reqs[2].data().expect("enable"), &[0]);
    let ik = cdpr_core::kinematics::lengths(
        &uvigo8(),
        &cdpr_core::kinematics::Pose::from_array(uvigo8().home),
    );
    assert_eq!(lengths.len(), ik.len());
    for (got, want) in lengths.iter().zip(&ik) {
        assert!((got - want * 1000.0).abs() < 1e-9, "{got} vs {want}");
    }
    // A missing handle fails its own slot only.
    let mut b = [0u8; 8];
    let mut reqs = [
        ReadRequest::new(0xF005, 0xDEAD, &mut b),
        ReadRequest::new(0xF005, handles[1].raw(), &mut n),
    ];
    dev.read_multi(&mut reqs).expect("sum read itself succeeds");
    assert!(matches!(reqs[0].data(), Err(ads::Error::Ads(_, _, 0x710))));
    assert!(reqs[1].data().is_ok());
}

#[test]
fn sum_write_then_sum_read_back() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let (ig, pose_io) = ads::symbol::get_location(dev, "GVL_Shadow.aShadowPose").expect("pose");
    let (_, cycle_io) = ads::symbol::get_location(dev, "GVL_Shadow.nShadowCycle").expect("cycle");
    let pose: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let cycle = 77u32.to_le_bytes();
    let mut w = [
        WriteRequest::new(ig, pose_io, &pose),
        WriteRequest::new(ig, cycle_io, &cycle),
    ];
    dev.write_multi(&mut w).expect("sum write");
    w.iter().for_each(|r| r.ensure().expect("each write"));
    let mut c4 = [0u8; 4];
    dev.read_exact(ig, cycle_io, &mut c4).expect("read");
    assert_eq!(u32::from_le_bytes(c4), 77);
}

#[test]
fn an_unknown_symbol_and_a_bad_size_get_their_ads_error_codes() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    match ads::Handle::new(dev, "GVL_Shadow.nope") {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x710),
        other => panic!("expected 0x710, got {:?}", other.map(|h| h.raw())),
    }
    let h = ads::Handle::new(dev, "GVL_Shadow.nCycle").expect("handle");
    let mut too_big = [0u8; 8];
    match h.read(&mut too_big) {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x705),
        other => panic!("expected 0x705, got {other:?}"),
    }
    match h.write(&[1, 2]) {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x705),
        other => panic!("expected 0x705, got {other:?}"),
    }
    let mut b = [0u8; 4];
    match dev.read(0x1234, 0, &mut b) {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x702),
        other => panic!("expected 0x702, got {other:?}"),
    }
    match dev.read(0x4040, 1_000_000, &mut b) {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x703),
        other => panic!("expected 0x703, got {other:?}"),
    }
    match dev.read(0xF003, 0, &mut b) {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x701),
        other => panic!("expected 0x701, got {other:?}"),
    }
    // Wrong AMS port: "target port not found".
    let wrong = c.device(ads::AmsAddr::new(
        ads::AmsNetId::new(127, 0, 0, 1, 1, 1),
        852,
    ));
    match wrong.get_state() {
        Err(ads::Error::Ads(_, _, code)) => assert_eq!(code, 0x6),
        other => panic!("expected 0x6, got {other:?}"),
    }
}

#[test]
fn cyclic_and_on_change_notifications_arrive() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let rx = c.get_notification_channel();
    let (ig, io) = ads::symbol::get_location(dev, "GVL_Shadow.nCycle").expect("location");
    let cyclic = ads::notif::Attributes::new(
        4,
        ads::notif::TransmissionMode::ServerCycle,
        Duration::ZERO,
        Duration::from_millis(10),
    );
    let h = dev.add_notification(ig, io, &cyclic).expect("add");
    let mut values = Vec::new();
    while values.len() < 5 {
        let n = rx.recv_timeout(HUNG).expect("hung: no cyclic notification");
        for s in n.samples() {
            assert_eq!(s.handle, h);
            assert!(s.timestamp > 130_000_000_000_000_000, "FILETIME after 2012");
            values.push(u32::from_le_bytes(s.data.try_into().expect("4 bytes")));
        }
    }
    assert!(values.windows(2).all(|w| w[1] >= w[0]), "{values:?}");
    dev.delete_notification(h).expect("delete");
    assert!(matches!(
        dev.delete_notification(h),
        Err(ads::Error::Ads(_, _, 0x714))
    ));

    // On change: a write to the shadow's echo comes back once per change.
    while rx.try_recv().is_ok() {}
    let (_, echo) = ads::symbol::get_location(dev, "GVL_Shadow.nShadowCycle").expect("echo");
    let on_change = ads::notif::Attributes::new(
        4,
        ads::notif::TransmissionMode::ServerOnChange,
        Duration::ZERO,
        Duration::from_millis(1),
    );
    let h = dev
        .add_notification(ig, echo, &on_change)
        .expect("add on change");
    let first = rx
        .recv_timeout(HUNG)
        .expect("hung: no notification of the initial value");
    assert_eq!(
        first.samples().next().map(|s| s.data.to_vec()),
        Some(vec![0, 0, 0, 0])
    );
    dev.write(ig, echo, &42u32.to_le_bytes()).expect("write");
    let changed = rx
        .recv_timeout(HUNG)
        .expect("hung: no notification of the change");
    assert_eq!(
        changed.samples().next().map(|s| s.data.to_vec()),
        Some(42u32.to_le_bytes().to_vec())
    );
    std::thread::sleep(Duration::from_millis(30));
    assert!(rx.try_recv().is_err(), "no notification without a change");
    dev.delete_notification(h).expect("delete");
}

#[test]
fn symbol_upload_decodes_with_the_ads_crate() {
    let rt = runtime();
    let c = client(&rt);
    let dev = c.device(target());
    let (symbols, types) = ads::symbol::get_symbol_info(dev).expect("upload");
    let cmd = symbols
        .iter()
        .find(|s| s.name == "GVL_Shadow.aCmdLengths")
        .expect("listed");
    assert_eq!(
        (cmd.typ.as_str(), cmd.size, cmd.base_type),
        ("ARRAY [1..8] OF LREAL", 64, 5)
    );
    let anchors = types
        .get("ARRAY [1..8,1..3] OF LREAL")
        .expect("2-D array type");
    assert_eq!(anchors.array, vec![(1, 8), (1, 3)]);
    // 12 of the GVL's symbols, the reaction diagnostic and the interference flag.
    assert_eq!(symbols.len(), 14);
}

#[test]
fn a_client_asking_for_a_router_port_is_granted_one() {
    // `Source::Request`: what a client of a local TwinCAT router does first.
    let rt = runtime();
    let c = ads::Client::new(
        ("127.0.0.1", rt.server.local_addr().port()),
        ads::Timeouts::new(Duration::from_secs(2)),
        ads::Source::Request,
    )
    .expect("port granted");
    assert_eq!(c.source().netid(), ads::AmsNetId::new(127, 0, 0, 1, 1, 1));
    let dev = c.device(ads::AmsAddr::new(ads::AmsNetId::local(), 851));
    assert!(dev.get_state().is_ok());
}
