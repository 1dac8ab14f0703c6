use super::*;

#[test]
fn net_ids_parse_print_and_name_the_bad_part() {
    let id: AmsNetId = "5.32.116.5.1.1".parse().expect("parses");
    assert_eq!(id.0, [5, 32, 116, 5, 1, 1]);
    assert_eq!(id.to_string(), "5.32.116.5.1.1");
    assert!("1.2.3.4.5".parse::<AmsNetId>().unwrap_err().contains("6"));
    assert!(
        "1.2.3.4.5.300"
            .parse::<AmsNetId>()
            .unwrap_err()
            .contains("`300`")
    );
}

#[test]
fn pyads_read_state_as_seen_on_the_wire_decodes() {
    // First bytes pyads 3.6.0 sent in the probe (notes/ads.md §1.5).
    let bytes = [
        0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, 0x01, 0x01, 0x01, 0x53, 0x03, 0x0a,
        0x00, 0x00, 0x05, 0x01, 0x01, 0x31, 0x75, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    ];
    let (frame, used) = decode_frame(&bytes, MAX_AMS_LEN)
        .expect("valid")
        .expect("complete");
    assert_eq!(used, bytes.len());
    let Frame::Ams { header, payload } = frame else {
        panic!("an ADS frame")
    };
    assert_eq!(header.target, AmsAddr::new(AmsNetId::LOCAL, 851));
    assert_eq!(header.source.net_id.to_string(), "10.0.0.5.1.1");
    assert_eq!(
        (header.command, header.state_flags, header.invoke_id),
        (cmd::READ_STATE, 4, 1)
    );
    assert_eq!(
        decode_request(header.command, payload),
        Ok(Request::ReadState)
    );
    // The reply swaps the addresses and sets flags 5: 38 + 8 bytes.
    let reply = encode_reply(
        &header,
        &Response::State {
            result: 0,
            ads_state: 5,
            device_state: 0,
        },
    );
    assert_eq!(reply.len(), 46);
    assert_eq!(&reply[6..14], &bytes[14..22]);
    assert_eq!(&reply[14..22], &bytes[6..14]);
    assert_eq!(&reply[24..26], &[5, 0]);
}

#[test]
fn frames_need_all_their_bytes_and_consistent_lengths() {
    let h = AmsHeader {
        command: cmd::READ,
        ..AmsHeader::default()
    };
    let req = Request::Read {
        index_group: 0x4040,
        index_offset: 8,
        length: 4,
    };
    let f = encode_frame(&h, &encode_request(&req));
    for cut in 0..f.len() {
        assert_eq!(
            decode_frame(&f[..cut], MAX_AMS_LEN),
            Ok(None),
            "cut at {cut}"
        );
    }
    let mut bad = f.clone();
    bad[26] = 99; // AMS data length disagrees with the AMS/TCP length
    assert!(matches!(
        decode_frame(&bad, MAX_AMS_LEN),
        Err(FrameError::Inconsistent { .. })
    ));
    let mut big = f.clone();
    big[2..6].copy_from_slice(&(MAX_AMS_LEN as u32 + 1).to_le_bytes());
    assert!(matches!(
        decode_frame(&big, MAX_AMS_LEN),
        Err(FrameError::TooLarge { .. })
    ));
    let mut short = vec![0, 0, 4, 0, 0, 0];
    short.extend([0; 4]);
    assert_eq!(
        decode_frame(&short, MAX_AMS_LEN),
        Err(FrameError::TooShort { length: 4 })
    );
    assert_eq!(
        decode_frame(&[7, 7, 0, 0, 0, 0], MAX_AMS_LEN),
        Err(FrameError::UnknownKind(0x0707))
    );
}

/// Secure ADS's frames: the same frame without its 6-byte AMS/TCP header decodes to the same
/// header and payload, needs all its bytes, and a length over the limit is refused as soon as
/// the AMS header is in (before any payload).
#[test]
fn bare_frames_are_framed_by_the_ams_header_alone() {
    let h = AmsHeader {
        command: cmd::READ,
        invoke_id: 9,
        ..AmsHeader::default()
    };
    let req = Request::Read {
        index_group: 0x4040,
        index_offset: 8,
        length: 4,
    };
    let framed = encode_frame(&h, &encode_request(&req));
    let bare = Framing::Bare.outgoing(&framed);
    assert_eq!(bare, &framed[TCP_HEADER_LEN..]);
    let (plain, used) = decode_frame(&framed, MAX_AMS_LEN)
        .expect("valid")
        .expect("whole");
    assert_eq!(used, framed.len());
    assert_eq!(
        Framing::Bare.decode(bare, MAX_AMS_LEN),
        Ok(Some((plain, bare.len())))
    );
    for cut in 0..bare.len() {
        assert_eq!(
            Framing::Bare.decode(&bare[..cut], MAX_AMS_LEN),
            Ok(None),
            "cut {cut}"
        );
    }
    let mut big = bare[..AMS_HEADER_LEN].to_vec();
    big[20..24].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    assert!(matches!(
        Framing::Bare.decode(&big, MAX_AMS_LEN),
        Err(FrameError::TooLarge { .. })
    ));
}

#[test]
fn requests_round_trip_and_short_payloads_are_0x705() {
    let reqs = [
        Request::ReadDeviceInfo,
        Request::Read {
            index_group: 1,
            index_offset: 2,
            length: 3,
        },
        Request::Write {
            index_group: 1,
            index_offset: 2,
            data: &[9, 8, 7],
        },
        Request::WriteControl {
            ads_state: 5,
            device_state: 1,
            data: &[1],
        },
        Request::AddNotification(NotificationParams {
            index_group: 0xF005,
            index_offset: 0x10001,
            length: 8,
            trans_mode: 3,
            max_delay: 0,
            cycle_time: 1_000_000,
        }),
        Request::DeleteNotification { handle: 12 },
        Request::ReadWrite {
            index_group: 0xF003,
            index_offset: 0,
            read_length: 4,
            data: b"x\0",
        },
    ];
    for r in &reqs {
        let bytes = encode_request(r);
        assert_eq!(decode_request(r.command(), &bytes).as_ref(), Ok(r));
        if !bytes.is_empty() {
            assert_eq!(
                decode_request(r.command(), &bytes[..bytes.len() - 1]),
                Err(error::INVALID_SIZE)
            );
        }
    }
    assert_eq!(decode_request(42, &[]), Err(error::SERVICE_NOT_SUPPORTED));
}

#[test]
fn sum_items_round_trip_and_replies_follow_each_layout() {
    let items = [
        SumItem {
            index_group: 0x4040,
            index_offset: 0,
            length: 2,
            read_length: 2,
            data: &[1, 2],
        },
        SumItem {
            index_group: 0x4040,
            index_offset: 8,
            length: 1,
            read_length: 4,
            data: &[3],
        },
    ];
    for g in [
        group::SUM_READ,
        group::SUM_WRITE,
        group::SUM_READ_WRITE,
        group::SUM_READ_EX,
    ] {
        let bytes = encode_sum_items(g, &items);
        let back = decode_sum_items(g, 2, &bytes).expect("decodes");
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].index_offset, 8);
        assert!(
            decode_sum_items(g, 3, &bytes).is_err(),
            "count beyond the payload"
        );
    }
    let results = vec![(0, vec![1, 2], 4), (0x710, vec![], 2)];
    // 0xF080: results, then blocks padded to the requested lengths.
    assert_eq!(
        encode_sum_reply(group::SUM_READ, &results),
        [0, 0, 0, 0, 0x10, 7, 0, 0, 1, 2, 0, 0, 0, 0]
    );
    // 0xF084: (result, length) pairs, then blocks packed.
    assert_eq!(
        encode_sum_reply(group::SUM_READ_EX2, &results),
        [0, 0, 0, 0, 2, 0, 0, 0, 0x10, 7, 0, 0, 0, 0, 0, 0, 1, 2]
    );
    assert_eq!(
        encode_sum_reply(group::SUM_WRITE, &results),
        [0, 0, 0, 0, 0x10, 7, 0, 0]
    );
    assert!(
        decode_sum_items(group::SUM_READ, u32::MAX, &[0; 12]).is_err(),
        "no huge allocation"
    );
}

#[test]
fn notification_frame_matches_the_documented_example() {
    // notes/ads.md §1.4: handle 0x1001, one LREAL 1.5.
    let client = AmsAddr::new(AmsNetId([10, 0, 0, 5, 1, 1]), 30000);
    let f = encode_notification(
        client,
        AmsAddr::new(AmsNetId::LOCAL, 851),
        0x01D0_0000_0000_0000,
        &[(0x1001, &1.5f64.to_le_bytes())],
    );
    assert_eq!(&f[2..6], &68u32.to_le_bytes());
    assert_eq!(&f[24..26], &[4, 0], "state flags 4: a request");
    let payload = &f[38..];
    assert_eq!(&payload[..8], &[0x20, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(&payload[16..28], &[1, 0, 0, 0, 1, 0x10, 0, 0, 8, 0, 0, 0]);
    assert_eq!(&payload[28..], &1.5f64.to_le_bytes());
    // FILETIME of the Unix epoch.
    assert_eq!(filetime(std::time::UNIX_EPOCH), 116_444_736_000_000_000);
}

#[test]
fn decoders_never_panic_on_random_bytes() {
    let mut x = 0x1234_5678_9ABC_DEF0u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let n = (next() % 80) as usize;
        let b: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        let _ = decode_frame(&b, MAX_AMS_LEN);
        let _ = decode_request((next() % 12) as u16, &b);
        let count = (next() % 8) as u32;
        for g in group::SUM_READ..=group::SUM_DELETE_NOTIFICATION {
            let _ = decode_sum_items(g, count, &b);
        }
        let _ = decode_sum_notifications(count, &b);
        let _ = decode_sum_handles(count, &b);
    }
}
