use super::*;
use proptest::prelude::*;

fn addr(id: [u8; 6], port: u16) -> AmsAddr {
    AmsAddr::new(AmsNetId(id), port)
}

/// An add-route request as the `ads` crate builds it (`udp::add_route`), its items in its
/// order.
fn ads_crate_add_route(temporary: bool) -> Vec<u8> {
    use ads::udp::{Message, ServiceId, Tag};
    let net_id = ads::AmsNetId::new(192, 168, 1, 50, 1, 1);
    let mut m = Message::new(ServiceId::AddRoute, ads::AmsAddr::new(net_id, 0));
    m.add_bytes(Tag::NetID, &net_id.0);
    m.add_str(Tag::ComputerName, "192.168.1.50");
    m.add_str(Tag::UserName, "Administrator");
    m.add_str(Tag::Password, "1");
    m.add_str(Tag::RouteName, "laptop");
    if temporary {
        m.add_u32(Tag::Options, 1);
    }
    m.as_bytes().to_vec()
}

/// A foreign encoder: the `ads` crate's bytes decode into the same message ours encodes, and
/// ours into the same bytes.
#[test]
fn the_ads_crates_add_route_request_decodes_as_ours() {
    for temporary in [false, true] {
        let foreign = ads_crate_add_route(temporary);
        let m = decode(&foreign).expect("decodes");
        let mut ours = UdpMessage::new(service::ADD_ROUTE, 0, addr([192, 168, 1, 50, 1, 1], 0))
            .with_bytes(tag::NET_ID, &[192, 168, 1, 50, 1, 1])
            .with_str(tag::COMPUTER_NAME, "192.168.1.50")
            .with_str(tag::USER_NAME, "Administrator")
            .with_str(tag::PASSWORD, "1")
            .with_str(tag::ROUTE_NAME, "laptop");
        if temporary {
            ours = ours.with_u32(tag::OPTIONS, 1);
        }
        assert_eq!(m, ours);
        assert_eq!(ours.encode().expect("encodes"), foreign);
        assert_eq!(m.get_str(tag::PASSWORD).as_deref(), Some("1"));
        assert_eq!(
            m.get_net_id(tag::NET_ID),
            Some(AmsNetId([192, 168, 1, 50, 1, 1]))
        );
        assert_eq!(m.get_u32(tag::OPTIONS), temporary.then_some(1));
        assert!(!m.is_reply());
    }
}

/// And the other way: an identify reply we encode is what the `ads` crate's parser reads
/// (checked on our own bytes only: its parser panics on hostile ones).
#[test]
fn our_identify_reply_reads_in_the_ads_crate() {
    use ads::udp::{Message, ServiceId, Tag};
    let os = OsVersion {
        major: 10,
        minor: 0,
        build: 19044,
        platform: 2,
        text: "Service Pack 1".into(),
    };
    let ours = UdpMessage::new(
        service::IDENTIFY | REPLY,
        0,
        addr([5, 1, 2, 3, 1, 1], 10000),
    )
    .with_str(tag::COMPUTER_NAME, "CX-1234")
    .with_bytes(
        tag::TC_VERSION,
        &TcVersion {
            major: 3,
            minor: 1,
            build: 4024,
        }
        .encode(),
    )
    .with_bytes(tag::OS_VERSION, &os.encode())
    .with_str(tag::FINGERPRINT, "abc");
    let bytes = ours.encode().expect("encodes");
    let theirs = Message::parse(&bytes, ServiceId::Identify, true).expect("parses");
    assert_eq!(theirs.get_str(Tag::ComputerName), Some("CX-1234"));
    assert_eq!(theirs.get_source().netid().0, [5, 1, 2, 3, 1, 1]);
    assert_eq!(
        theirs.get_bytes(Tag::TCVersion),
        Some(&[3, 1, 0xb8, 0x0f][..])
    );
    let back = decode(&bytes).expect("decodes");
    assert_eq!(back, ours);
    let os_back = OsVersion::decode(back.get(tag::OS_VERSION).expect("os")).expect("os");
    assert_eq!(os_back, os);
    assert_eq!(os_back.describe(), "Windows NT 10.0.19044 (Service Pack 1)");
}

#[test]
fn bad_magic_short_headers_and_lying_counts_are_refused() {
    let good = ads_crate_add_route(false);
    let mut bad = good.clone();
    bad[0] ^= 0xff;
    assert!(matches!(decode(&bad), Err(UdpError::BadMagic(_))));
    assert_eq!(decode(&good[..23]), Err(UdpError::TooShort { len: 23 }));
    // A count beyond the limit, and one within it that the bytes cannot hold.
    let mut many = good.clone();
    many[20..24].copy_from_slice(&1000u32.to_le_bytes());
    assert_eq!(decode(&many), Err(UdpError::TooManyItems { count: 1000 }));
    let mut more = good.clone();
    more[20..24].copy_from_slice(&6u32.to_le_bytes());
    assert!(matches!(decode(&more), Err(UdpError::Truncated { .. })));
    // The last item's length beyond the datagram (what makes the `ads` crate panic).
    let mut long = good.clone();
    let n = long.len();
    long.truncate(n - 2);
    assert!(matches!(decode(&long), Err(UdpError::Truncated { .. })));
    // Bytes after the counted items are ignored.
    let mut padded = good.clone();
    padded.extend_from_slice(&[0; 7]);
    assert_eq!(decode(&padded), decode(&good));
    assert!(matches!(
        decode(&vec![0u8; MAX_DATAGRAM + 1]),
        Err(UdpError::TooLong { .. })
    ));
    let huge = UdpMessage::new(1, 0, AmsAddr::default()).with_bytes(2, &vec![0; 70_000]);
    assert!(matches!(huge.encode(), Err(UdpError::ItemTooLong { .. })));
}

#[test]
fn strings_end_at_their_nul_and_survive_bad_utf8() {
    assert_eq!(c_string(b"abc\0def"), "abc");
    assert_eq!(c_string(b"abc"), "abc");
    assert_eq!(c_string(b""), "");
    assert_eq!(c_string(&[0xff, b'a', 0]), "\u{fffd}a");
    assert_eq!(TcVersion::decode(&[3, 1]), None);
    assert_eq!(OsVersion::decode(&[0; 19]), None);
}

fn message() -> impl Strategy<Value = UdpMessage> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<[u8; 6]>(),
        any::<u16>(),
        prop::collection::vec(
            (any::<u16>(), prop::collection::vec(any::<u8>(), 0..40)),
            0..12,
        ),
    )
        .prop_map(|(invoke_id, service, id, port, items)| UdpMessage {
            invoke_id,
            service,
            source: addr(id, port),
            items,
        })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = decode(&bytes);
        // With a valid magic in front, the rest gets parsed too.
        let mut framed = MAGIC.to_le_bytes().to_vec();
        framed.extend_from_slice(&bytes);
        if let Ok(m) = decode(&framed) {
            for (t, d) in &m.items {
                let _ = (m.get_str(*t), m.get_u32(*t), m.get_net_id(*t));
                let _ = (TcVersion::decode(d), OsVersion::decode(d).map(|o| o.describe()));
            }
        }
    }

    #[test]
    fn messages_round_trip(m in message()) {
        let bytes = m.encode().expect("encodes");
        prop_assert_eq!(decode(&bytes), Ok(m));
    }

    #[test]
    fn versions_round_trip(
        major in any::<u32>(), minor in any::<u32>(), build in any::<u32>(),
        platform in 0u32..5, text in "[ -~]{0,100}", tc in any::<[u8; 4]>(),
    ) {
        let os = OsVersion { major, minor, build, platform, text };
        prop_assert_eq!(OsVersion::decode(&os.encode()), Some(os));
        let v = TcVersion::decode(&tc).expect("4 bytes");
        prop_assert_eq!(v.encode(), tc);
    }
}
