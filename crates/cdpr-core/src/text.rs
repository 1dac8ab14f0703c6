//! Numbers and lists as messages write them. Knows no robot.

/// A limit as people write it: the shorter of plain and scientific notation (0.001, 1e-5,
/// 3600, 1e6).
pub fn short(x: f64) -> String {
    let plain = format!("{x}");
    let exp = format!("{x:e}");
    if exp.len() < plain.len() { exp } else { plain }
}

#[cfg(test)]
mod tests {
    #[test]
    fn limits_take_the_shorter_notation() {
        let s = super::short;
        assert_eq!(s(0.001), "1e-3");
        assert_eq!(s(1e-5), "1e-5");
        assert_eq!(s(3600.0), "3600");
        assert_eq!(s(1e6), "1e6");
        assert_eq!(s(0.01), "0.01");
        assert_eq!(s(1e3), "1e3");
    }
}
