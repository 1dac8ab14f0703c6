//! Numbers and lists as messages write them. Knows no robot.

/// A limit as people write it: the shorter of plain and scientific notation (0.001, 1e-5,
/// 3600, 1e6).
pub fn short(x: f64) -> String {
    let plain = format!("{x}");
    let exp = format!("{x:e}");
    if exp.len() < plain.len() { exp } else { plain }
}

/// A value as people write it in a message: plain from 0.001 to 1e5 (9.607, 0.001, 250),
/// elsewhere the shorter of plain and scientific notation (1e-6, 1e300); never 9.607e0.
pub struct Plain(pub f64);

impl std::fmt::Display for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (plain, exp) = (format!("{}", self.0), format!("{:e}", self.0));
        let ordinary = (1e-3..1e5).contains(&self.0.abs());
        f.write_str(if !ordinary && exp.len() < plain.len() {
            &exp
        } else {
            &plain
        })
    }
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

    /// Numbers in robot-file messages as people write them, never `9.607e0`.
    #[test]
    fn values_take_the_plain_notation_in_ordinary_ranges() {
        let s = |x: f64| super::Plain(x).to_string();
        assert_eq!(s(9.607), "9.607");
        assert_eq!(s(-9.607), "-9.607");
        assert_eq!(s(0.001), "0.001");
        assert_eq!(s(1e-6), "1e-6");
        assert_eq!(s(1e6), "1e6");
        assert_eq!(s(1e300), "1e300");
        assert_eq!(s(250.0), "250");
        assert_eq!(s(0.0), "0");
    }
}
