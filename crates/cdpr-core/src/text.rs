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

/// An error and its causes, joined by ": " (as anyhow's `{:#}` prints them): a one-line
/// message for a face without anyhow (a sweep's row, the viewer's panel, Python).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        parts.push(e.to_string());
        cause = e.source();
    }
    parts.join(": ")
}

/// Appends `v` as Rust's `Display` writes it (`format!("{v}")`: the shortest digits that read
/// back as `v`, positional, no exponent: `0.0000001`, `1e16` as `10000000000000000`, `-0`,
/// `NaN`, `inf`), byte for byte, about three times faster: the digits come from `ryu`
/// (Ryū, the shortest round-trip digits), placed here without the exponent. A run's
/// CSV is tens of numbers a step, and `Display`'s digit search was most of its cost.
pub fn push_display_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.extend_from_slice(if v.is_nan() {
            b"NaN"
        } else if v > 0.0 {
            b"inf"
        } else {
            b"-inf"
        });
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(v).as_bytes();
    // Ryū writes [1e-5, 1e16) positionally (`0.00123`, `42.0`), the rest with an exponent.
    let positional = !text.contains(&b'e');
    if positional && !tie_possible(v, text) {
        out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
        return;
    }
    push_digits(out, v, text);
}

/// Whether `text` (Ryū's positional digits of `v`) may be one of two shortest candidates
/// `v` lies exactly halfway between: only when `v`'s last binary digit sits where a decimal
/// digit after `text`'s last would (see [`halfway_above`]); cheap, without the digits' value.
fn tie_possible(v: f64, text: &[u8]) -> bool {
    let text = text.strip_suffix(b".0").unwrap_or(text);
    let s = match text.iter().position(|&b| b == b'.') {
        Some(point) => (text.len() - point - 1) as i64,
        None => -(text.iter().rev().take_while(|&&b| b == b'0').count() as i64),
    };
    let (m, e) = mantissa_exponent(v);
    m != 0 && i64::from(m.trailing_zeros()) + e + 1 + s == 0
}

/// `v = m·2ᵉ` with `m` a whole number (m = 0 for zero).
fn mantissa_exponent(v: f64) -> (u64, i64) {
    let bits = v.abs().to_bits();
    let (fraction, biased) = (bits & ((1 << 52) - 1), (bits >> 52) as i64);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

/// The general path of [`push_display_f64`]: Ryū's digits and exponent placed positionally,
/// a tie rounded away from zero.
fn push_digits(out: &mut Vec<u8>, v: f64, text: &[u8]) {
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e' || b == b'E') {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    // The mantissa's digits without the point, and where the point is (digits before it).
    let mut digits = [0u8; 32];
    let (mut count, mut point) = (0usize, None);
    for &b in mantissa {
        if b == b'.' {
            point = Some(count);
        } else if count < digits.len() {
            digits[count] = b;
            count += 1;
        }
    }
    let mut point = point.unwrap_or(count) as i64 + exponent;
    // Leading zeros (`0.001`) and trailing zeros (`1.0`, `100`) carry no digit.
    let mut first = 0;
    while first < count && digits[first] == b'0' {
        first += 1;
        point -= 1;
    }
    while count > first && digits[count - 1] == b'0' {
        count -= 1;
    }
    let n = count - first;
    if n > 0 {
        // A tie (`v` exactly halfway between two shortest candidates): Ryū takes the even
        // one, `Display` the one away from zero.
        let d = digits[first..count]
            .iter()
            .fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'));
        if halfway_above(v, d, n as i64 - point) {
            let up = (d + 1).to_string();
            let grown = up.len() as i64 - n as i64;
            digits = [0u8; 32];
            digits[..up.len()].copy_from_slice(up.as_bytes());
            first = 0;
            count = up.len();
            point += grown;
            while count > 0 && digits[count - 1] == b'0' {
                count -= 1;
            }
        }
    }
    if negative {
        out.push(b'-');
    }
    let digits = &digits[first..count];
    if digits.is_empty() {
        out.push(b'0');
        return;
    }
    let n = digits.len() as i64;
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-point) as usize));
        out.extend_from_slice(digits);
    } else if point >= n {
        out.extend_from_slice(digits);
        out.extend(std::iter::repeat_n(b'0', (point - n) as usize));
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(fraction);
    }
}

/// Whether |v| is exactly (d + ½)·10⁻ˢ: with v = m·2ᵉ, 2|v|·10ˢ = 2d + 1 compares odd parts
/// and powers of two (5ˢ is odd), in integers.
fn halfway_above(v: f64, d: u64, s: i64) -> bool {
    let (m, e) = mantissa_exponent(v);
    if m == 0 {
        return false;
    }
    let zeros = i64::from(m.trailing_zeros());
    if zeros + e + 1 + s != 0 {
        return false;
    }
    let pow5 = |k: i64| -> Option<u128> {
        let k = u32::try_from(k).ok()?;
        5u128.checked_pow(k)
    };
    let odd = u128::from(m >> zeros);
    let target = u128::from(2 * d + 1);
    match (pow5(s.max(0)), pow5((-s).max(0))) {
        (Some(left), Some(right)) => match (odd.checked_mul(left), target.checked_mul(right)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
        _ => false,
    }
}

fn parse_exponent(text: &[u8]) -> i64 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i64, |n, &d| n * 10 + i64::from(d.wrapping_sub(b'0')))
}

#[cfg(test)]
mod display_tests {
    use super::push_display_f64;

    fn check(v: f64) {
        let mut out = Vec::new();
        push_display_f64(&mut out, v);
        assert_eq!(
            String::from_utf8(out).expect("ASCII"),
            format!("{v}"),
            "{v:e} ({:#x})",
            v.to_bits()
        );
    }

    #[test]
    fn floats_are_written_as_display_writes_them() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.3,
            1e-7,
            1e16,
            1.5e300,
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            123456.0,
            0.001,
            100.0,
            1e21,
            1e22,
            12.5e-9,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            9.81,
            1.0 / 3.0,
        ] {
            check(v);
        }
        // Every exponent, random mantissas (splitmix64), and values of a run's size.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..200_000 {
            check(f64::from_bits(next()));
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            check((u - 0.5) * 4.0);
            check(u * 1e-3);
            check((u * 1e6).round() / 1e3);
            // 2⁴⁰ … 2⁷⁰, where few fraction bits make exact ties between shortest candidates.
            let exponent = 1063 + next() % 30;
            check(f64::from_bits((exponent << 52) | (next() >> 12)));
        }
    }
}
