//! The IEC 61131-3 types of the symbols (BOOL, the integers, REAL, LREAL and arrays of them),
//! their ADS type codes and names as TwinCAT prints them, and their values' bytes. The
//! shadow's own symbols are BOOL, UDINT and REAL/LREAL; a lab's (a test suite's conditions on
//! `GVL.nState`) may be any of the elementary numbers.

/// The elementary types used here, with their ADS type codes (`ADST_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    UDInt,
    Real,
    LReal,
    SInt,
    USInt,
    Int,
    UInt,
    DInt,
    LInt,
    ULInt,
}

impl Scalar {
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool | Scalar::SInt | Scalar::USInt => 1,
            Scalar::Int | Scalar::UInt => 2,
            Scalar::UDInt | Scalar::DInt | Scalar::Real => 4,
            Scalar::LReal | Scalar::LInt | Scalar::ULInt => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "BOOL",
            Scalar::UDInt => "UDINT",
            Scalar::Real => "REAL",
            Scalar::LReal => "LREAL",
            Scalar::SInt => "SINT",
            Scalar::USInt => "USINT",
            Scalar::Int => "INT",
            Scalar::UInt => "UINT",
            Scalar::DInt => "DINT",
            Scalar::LInt => "LINT",
            Scalar::ULInt => "ULINT",
        }
    }
    /// ADST code: BOOL is ADST_BIT (33) though it takes a whole byte, as in TwinCAT.
    pub fn ads_type(self) -> u32 {
        match self {
            Scalar::Bool => 33,
            Scalar::UDInt => 19,
            Scalar::Real => 4,
            Scalar::LReal => 5,
            Scalar::SInt => 16,
            Scalar::USInt => 17,
            Scalar::Int => 2,
            Scalar::UInt => 18,
            Scalar::DInt => 3,
            Scalar::LInt => 20,
            Scalar::ULInt => 21,
        }
    }
    fn parse(s: &str) -> Option<Scalar> {
        match s.trim().to_ascii_uppercase().as_str() {
            "BOOL" => Some(Scalar::Bool),
            "UDINT" | "DWORD" => Some(Scalar::UDInt),
            "REAL" => Some(Scalar::Real),
            "LREAL" => Some(Scalar::LReal),
            "SINT" => Some(Scalar::SInt),
            "USINT" | "BYTE" => Some(Scalar::USInt),
            "INT" => Some(Scalar::Int),
            "UINT" | "WORD" => Some(Scalar::UInt),
            "DINT" => Some(Scalar::DInt),
            "LINT" => Some(Scalar::LInt),
            "ULINT" | "LWORD" => Some(Scalar::ULInt),
            _ => None,
        }
    }
}

/// A scalar or an array of scalars; `dims` holds (lower bound, element count) per dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IecType {
    pub scalar: Scalar,
    pub dims: Vec<(i32, u32)>,
}

impl IecType {
    pub fn scalar(scalar: Scalar) -> IecType {
        IecType {
            scalar,
            dims: Vec::new(),
        }
    }
    /// `ARRAY[1..n1, 1..n2, ...] OF scalar`.
    pub fn array(scalar: Scalar, counts: &[u32]) -> IecType {
        IecType {
            scalar,
            dims: counts.iter().map(|&n| (1, n)).collect(),
        }
    }
    pub fn elements(&self) -> usize {
        self.dims.iter().map(|&(_, n)| n as usize).product()
    }
    pub fn size(&self) -> usize {
        self.elements() * self.scalar.size()
    }
    /// The size, `None` when it does not fit a u32 (a type parsed from a peer's name may claim
    /// any bounds: this is the size to check before anything is built from it).
    pub fn checked_size(&self) -> Option<usize> {
        let elements = self
            .dims
            .iter()
            .try_fold(1u64, |n, &(_, k)| n.checked_mul(u64::from(k)))?;
        let size = elements.checked_mul(self.scalar.size() as u64)?;
        u32::try_from(size).ok().map(|s| s as usize)
    }
    /// The type string TwinCAT reports, e.g. `ARRAY [1..8,1..3] OF LREAL` (with the space
    /// after ARRAY that pyads' type regex expects).
    pub fn type_name(&self) -> String {
        if self.dims.is_empty() {
            return self.scalar.name().to_string();
        }
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|&(lo, n)| format!("{lo}..{}", lo as i64 + n as i64 - 1))
            .collect();
        format!("ARRAY [{}] OF {}", dims.join(","), self.scalar.name())
    }
    /// Refuses an array where one value is read (a watched symbol named `name`): the reason
    /// names the first element to write instead.
    pub fn one_value(&self, name: &str) -> Result<(), String> {
        if self.dims.is_empty() {
            return Ok(());
        }
        let first: Vec<String> = self.dims.iter().map(|(lo, _)| lo.to_string()).collect();
        Err(format!(
            "is {}: a condition reads one value, name an element (`{name}[{}]`)",
            self.type_name(),
            first.join(",")
        ))
    }
    /// Parses what [`IecType::type_name`] writes (and `ARRAY[1..8] OF LREAL` without space).
    pub fn parse(s: &str) -> Option<IecType> {
        let s = s.trim();
        let upper = s.to_ascii_uppercase();
        let Some(rest) = upper.strip_prefix("ARRAY") else {
            return Scalar::parse(s).map(IecType::scalar);
        };
        let rest = rest.trim_start().strip_prefix('[')?;
        let (ranges, tail) = rest.split_once(']')?;
        let scalar = Scalar::parse(tail.trim_start().strip_prefix("OF")?)?;
        let mut dims = Vec::new();
        for range in ranges.split(',') {
            let (lo, hi) = range.split_once("..")?;
            let (lo, hi): (i32, i32) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
            let count = u32::try_from(i64::from(hi) - i64::from(lo) + 1).ok()?;
            if count == 0 {
                return None;
            }
            dims.push((lo, count));
        }
        Some(IecType { scalar, dims })
    }
}

/// Decodes an array (or scalar) of REAL/LREAL into f64; `None` for other types or a size
/// mismatch.
pub fn decode_reals(ty: &IecType, bytes: &[u8]) -> Option<Vec<f64>> {
    if bytes.len() != ty.size() {
        return None;
    }
    match ty.scalar {
        Scalar::LReal => Some(
            bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        ),
        Scalar::Real => Some(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        _ => None,
    }
}

/// Encodes f64 values as the REAL/LREAL array `ty`; `None` if the count or type differs.
pub fn encode_reals(ty: &IecType, values: &[f64]) -> Option<Vec<u8>> {
    if values.len() != ty.elements() {
        return None;
    }
    match ty.scalar {
        Scalar::LReal => Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        Scalar::Real => Some(
            values
                .iter()
                .flat_map(|&v| (v as f32).to_le_bytes())
                .collect(),
        ),
        _ => None,
    }
}

/// Decodes a UDINT (or a BOOL, as 0/1) scalar.
pub fn decode_u32(ty: &IecType, bytes: &[u8]) -> Option<u32> {
    match (ty.scalar, bytes) {
        (Scalar::UDInt, [a, b, c, d]) => Some(u32::from_le_bytes([*a, *b, *c, *d])),
        (Scalar::Bool, [a]) => Some(u32::from(*a != 0)),
        _ => None,
    }
}

/// A scalar of any elementary type as a number (BOOL as 0 or 1; a 64-bit integer beyond 2⁵³
/// rounded to the nearest f64); `None` for an array or a size mismatch.
pub fn decode_number(ty: &IecType, bytes: &[u8]) -> Option<f64> {
    if !ty.dims.is_empty() || bytes.len() != ty.scalar.size() {
        return None;
    }
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    Some(match ty.scalar {
        Scalar::Bool => f64::from(u8::from(bytes[0] != 0)),
        Scalar::SInt => f64::from(bytes[0] as i8),
        Scalar::USInt => f64::from(bytes[0]),
        Scalar::Int => f64::from(i16::from_le_bytes([b[0], b[1]])),
        Scalar::UInt => f64::from(u16::from_le_bytes([b[0], b[1]])),
        Scalar::DInt => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Scalar::UDInt => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Scalar::Real => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Scalar::LReal => f64::from_le_bytes(b),
        Scalar::LInt => i64::from_le_bytes(b) as f64,
        Scalar::ULInt => u64::from_le_bytes(b) as f64,
    })
}

/// Decodes an array (or a scalar) of any elementary type as numbers, element by element as
/// [`decode_number`] does; `None` if the size differs.
pub fn decode_numbers(ty: &IecType, bytes: &[u8]) -> Option<Vec<f64>> {
    if bytes.len() != ty.size() {
        return None;
    }
    let one = IecType::scalar(ty.scalar);
    bytes
        .chunks_exact(ty.scalar.size())
        .map(|c| decode_number(&one, c))
        .collect()
}

/// Encodes numbers as the array `ty` of any elementary type but BOOL: reals as they are,
/// integers rounded to the nearest, a 32-bit or narrower counter wrapping as a hardware
/// counter does (an encoder's DINT position goes on past 2³¹ − 1 at −2³¹), a 64-bit one
/// saturating. `None` if the count differs or a value is not finite.
pub fn encode_numbers(ty: &IecType, values: &[f64]) -> Option<Vec<u8>> {
    if values.len() != ty.elements() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if matches!(ty.scalar, Scalar::Real | Scalar::LReal) {
        return encode_reals(ty, values);
    }
    let mut out = Vec::with_capacity(ty.size());
    for &v in values {
        // Wrapping through i128: exact for every integer an f64 holds below 2¹²⁷.
        let n = v.round() as i128;
        match ty.scalar {
            Scalar::SInt | Scalar::USInt => out.push(n as u8),
            Scalar::Int | Scalar::UInt => out.extend_from_slice(&(n as u16).to_le_bytes()),
            Scalar::DInt | Scalar::UDInt => out.extend_from_slice(&(n as u32).to_le_bytes()),
            Scalar::LInt => out.extend_from_slice(&(v.round() as i64).to_le_bytes()),
            Scalar::ULInt => out.extend_from_slice(&(v.round() as u64).to_le_bytes()),
            Scalar::Bool | Scalar::Real | Scalar::LReal => return None,
        }
    }
    Some(out)
}

/// Encodes a UDINT or BOOL scalar.
pub fn encode_u32(ty: &IecType, value: u32) -> Option<Vec<u8>> {
    match ty.scalar {
        Scalar::UDInt if ty.dims.is_empty() => Some(value.to_le_bytes().to_vec()),
        Scalar::Bool if ty.dims.is_empty() => Some(vec![u8::from(value != 0)]),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
