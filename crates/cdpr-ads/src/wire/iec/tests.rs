use super::*;

#[test]
fn types_print_as_twincat_does_and_parse_back() {
    let t = IecType::array(Scalar::LReal, &[8, 3]);
    assert_eq!(t.type_name(), "ARRAY [1..8,1..3] OF LREAL");
    assert_eq!(t.size(), 192);
    assert_eq!(IecType::parse(&t.type_name()), Some(t));
    assert_eq!(
        IecType::parse("ARRAY[0..5] OF REAL").map(|t| t.size()),
        Some(24)
    );
    assert_eq!(
        IecType::parse("udint"),
        Some(IecType::scalar(Scalar::UDInt))
    );
    assert_eq!(IecType::parse("ARRAY [1..0] OF LREAL"), None);
    assert_eq!(IecType::parse("ST_Vec3"), None);
}

#[test]
fn every_elementary_number_decodes_to_its_value() {
    // The bytes as TwinCAT lays them out (little-endian, two's complement, IEEE 754), each
    // written by the standard library's own encoders for the value expected back.
    let cases: [(&str, Vec<u8>, f64); 12] = [
        ("BOOL", vec![1], 1.0),
        ("BOOL", vec![0], 0.0),
        ("SINT", (-7i8).to_le_bytes().to_vec(), -7.0),
        ("BYTE", 200u8.to_le_bytes().to_vec(), 200.0),
        ("INT", (-30000i16).to_le_bytes().to_vec(), -30000.0),
        ("WORD", 65535u16.to_le_bytes().to_vec(), 65535.0),
        ("DINT", (-2_000_000_000i32).to_le_bytes().to_vec(), -2e9),
        ("UDINT", 4_000_000_000u32.to_le_bytes().to_vec(), 4e9),
        (
            "LINT",
            (-(1i64 << 40)).to_le_bytes().to_vec(),
            -(2f64.powi(40)),
        ),
        ("ULINT", (1u64 << 52).to_le_bytes().to_vec(), 2f64.powi(52)),
        ("REAL", 0.5f32.to_le_bytes().to_vec(), 0.5),
        ("LREAL", (-1.25f64).to_le_bytes().to_vec(), -1.25),
    ];
    for (name, bytes, want) in cases {
        let ty = IecType::parse(name).expect(name);
        assert_eq!(ty.size(), bytes.len(), "{name}");
        assert_eq!(decode_number(&ty, &bytes), Some(want), "{name}");
    }
    let int = IecType::scalar(Scalar::Int);
    assert_eq!(decode_number(&int, &[1, 2, 3]), None, "a size mismatch");
    assert_eq!(
        decode_number(&IecType::array(Scalar::Int, &[2]), &[0; 4]),
        None,
        "an array is no number"
    );
    assert_eq!(int.type_name(), "INT");
    assert_eq!(Scalar::DInt.ads_type(), 3, "ADST_INT32");
}

#[test]
fn number_arrays_round_trip_and_counters_wrap_as_hardware_does() {
    let dint = IecType::array(Scalar::DInt, &[3]);
    // 2³¹ + 5 increments on a DINT counter read back as −2³¹ + 5 (the standard library's
    // wrapping conversion is the independent reference).
    let past = 2f64.powi(31) + 5.0;
    let bytes = encode_numbers(&dint, &[-3.4, 1e6, past]).expect("fits");
    assert_eq!(&bytes[..4], &(-3i32).to_le_bytes());
    assert_eq!(&bytes[8..], &((1i64 << 31) as i32 + 5).to_le_bytes());
    assert_eq!(
        decode_numbers(&dint, &bytes),
        Some(vec![-3.0, 1e6, -(2f64.powi(31)) + 5.0])
    );
    let int = IecType::array(Scalar::Int, &[2]);
    let bytes = encode_numbers(&int, &[-1000.0, 999.6]).expect("fits");
    assert_eq!(decode_numbers(&int, &bytes), Some(vec![-1000.0, 1000.0]));
    let lreal = IecType::array(Scalar::LReal, &[2]);
    let bytes = encode_numbers(&lreal, &[0.25, -1e-9]).expect("fits");
    assert_eq!(decode_numbers(&lreal, &bytes), Some(vec![0.25, -1e-9]));
    // The wrong count, a NaN, a BOOL: refused.
    assert_eq!(encode_numbers(&int, &[1.0]), None);
    assert_eq!(encode_numbers(&int, &[1.0, f64::NAN]), None);
    assert_eq!(
        encode_numbers(&IecType::array(Scalar::Bool, &[1]), &[1.0]),
        None
    );
    assert_eq!(decode_numbers(&dint, &[0; 11]), None);
}
