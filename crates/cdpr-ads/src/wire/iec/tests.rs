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
