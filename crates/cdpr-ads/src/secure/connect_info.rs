//! `TlsConnectInfo`: the one application-layer handshake of Secure ADS, sent by the client as
//! the first bytes inside the TLS tunnel and answered by the server with 64 bytes. Layout
//! (little endian; kevinherron/beckhoff-secure-ads, README "TlsConnectInfo"):
//!
//! ```text
//!  0  u16 total length (64 + user + password)   2  u16 flags
//!  4  u8  version (1)                           5  u8  error (responses)
//!  6  [u8; 6] AMS NetId (the sender's)         12  u8  user length   13 u8 password length
//! 14  18 reserved bytes (zero)                 32  [u8; 32] host name, NUL padded (ANSI)
//! 64  user, then password (only when the route is being added)
//! ```

use crate::wire::AmsNetId;

/// The fixed part; every response is exactly this long.
pub const BASE_LEN: usize = 64;
/// The longest request: the base and two strings of at most 255 bytes each... capped where
/// TwinCAT caps it.
pub const MAX_LEN: usize = 512;
/// The only version there is.
pub const VERSION: u8 = 1;
const HOST_LEN: usize = 32;

/// The flags (u16 at offset 2).
pub mod flag {
    /// Set in the server's answer.
    pub const RESPONSE: u16 = 0x01;
    /// AMS communication permitted (answers only).
    pub const AMS_ALLOWED: u16 = 0x02;
    /// Store only the fingerprint, not the peer's IP.
    pub const SERVER_INFO: u16 = 0x04;
    /// Store the route in a file of its own.
    pub const OWN_FILE: u16 = 0x08;
    /// Self-signed certificate mode.
    pub const SELF_SIGNED: u16 = 0x10;
    /// The route names the peer by IP address (not host name).
    pub const IP_ADDR: u16 = 0x20;
    /// Do not compare the certificate's common name with the host name.
    pub const IGNORE_CN: u16 = 0x40;
    /// Add a route for the sender (user and password appended).
    pub const ADD_REMOTE: u16 = 0x80;
}

/// The error byte of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectError {
    /// 1: the version is not one the server knows.
    Version,
    /// 2: the certificate's common name differs from the host name sent.
    CnMismatch,
    /// 3: the certificate is not trusted (no route with its fingerprint, not signed by the CA).
    UnknownCert,
    /// 4: wrong user or password, or a client the server does not know.
    UnknownUser,
    /// Any other code.
    Other(u8),
}

impl ConnectError {
    pub fn code(self) -> u8 {
        match self {
            ConnectError::Version => 1,
            ConnectError::CnMismatch => 2,
            ConnectError::UnknownCert => 3,
            ConnectError::UnknownUser => 4,
            ConnectError::Other(c) => c,
        }
    }

    /// `None` for 0 (no error).
    pub fn from_code(code: u8) -> Option<ConnectError> {
        match code {
            0 => None,
            1 => Some(ConnectError::Version),
            2 => Some(ConnectError::CnMismatch),
            3 => Some(ConnectError::UnknownCert),
            4 => Some(ConnectError::UnknownUser),
            c => Some(ConnectError::Other(c)),
        }
    }

    /// What the refusal means and what to change on which side.
    pub fn advice(self) -> String {
        match self {
            ConnectError::Version => "the PLC does not know this TlsConnectInfo version (1): \
                 its TwinCAT is older than 3.1.4024 or newer than this client knows"
                .into(),
            ConnectError::CnMismatch => "the common name (CN) of this machine's certificate is \
                 not the host name it sent: issue the certificate for this host name, or give \
                 --secure-host-name the certificate's CN"
                .into(),
            ConnectError::UnknownCert => "the PLC does not trust this machine's certificate: \
                 self-signed mode: register it once with the PLC's user and password (`cdpr \
                 route add HOST --secure ssc --user U --password P`), or the route was removed on \
                 the PLC; shared CA: the certificate is not signed by the CA the PLC trusts"
                .into(),
            ConnectError::UnknownUser => "the PLC refused the user or password (the PLC's \
                 operating-system user: TwinCAT's factory default is Administrator / 1), or \
                 does not know this client"
                .into(),
            ConnectError::Other(c) => format!("the PLC refused with TlsConnectInfo error {c}"),
        }
    }
}

/// One `TlsConnectInfo`, either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectInfo {
    pub flags: u16,
    pub version: u8,
    pub error: u8,
    pub net_id: AmsNetId,
    pub host_name: String,
    /// User and password: only with [`flag::ADD_REMOTE`].
    pub credentials: Option<(String, String)>,
}

/// Why bytes are not a `TlsConnectInfo`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InfoError {
    #[error("a TlsConnectInfo of {0} bytes: at least 64 and at most 512 expected")]
    Length(usize),
    #[error(
        "a TlsConnectInfo whose user ({user}) and password ({password}) lengths exceed its {length} bytes"
    )]
    Strings {
        length: usize,
        user: usize,
        password: usize,
    },
    #[error(
        "{what} holds `{c}`, which TwinCAT's ANSI strings cannot carry: use Latin-1 characters"
    )]
    NotAnsi { what: &'static str, c: char },
    #[error("{what} is {len} bytes long: at most {max} fit in a TlsConnectInfo")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
}

impl ConnectInfo {
    /// A client's request: version 1, no error.
    pub fn request(
        flags: u16,
        net_id: AmsNetId,
        host_name: &str,
        credentials: Option<(String, String)>,
    ) -> ConnectInfo {
        ConnectInfo {
            flags,
            version: VERSION,
            error: 0,
            net_id,
            host_name: host_name.to_string(),
            credentials,
        }
    }

    /// A server's answer: the response flag, `error` (0: accepted), the server's NetId.
    pub fn response(error: Option<ConnectError>, net_id: AmsNetId, host_name: &str) -> ConnectInfo {
        ConnectInfo {
            flags: flag::RESPONSE
                | if error.is_none() {
                    flag::AMS_ALLOWED
                } else {
                    0
                },
            version: VERSION,
            error: error.map_or(0, ConnectError::code),
            net_id,
            host_name: host_name.to_string(),
            credentials: None,
        }
    }

    /// The error the answer carries.
    pub fn refusal(&self) -> Option<ConnectError> {
        ConnectError::from_code(self.error)
    }

    pub fn encode(&self) -> Result<Vec<u8>, InfoError> {
        let (user, password) = match &self.credentials {
            Some((u, p)) => (ansi(u, "the user name")?, ansi(p, "the password")?),
            None => (Vec::new(), Vec::new()),
        };
        for (what, s) in [("the user name", &user), ("the password", &password)] {
            if s.len() > 255 {
                return Err(InfoError::TooLong {
                    what,
                    len: s.len(),
                    max: 255,
                });
            }
        }
        let length = BASE_LEN + user.len() + password.len();
        if length > MAX_LEN {
            return Err(InfoError::Length(length));
        }
        let mut out = Vec::with_capacity(length);
        out.extend_from_slice(&(length as u16).to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(self.version);
        out.push(self.error);
        out.extend_from_slice(&self.net_id.0);
        out.push(user.len() as u8);
        out.push(password.len() as u8);
        out.resize(32, 0);
        let mut host = ansi(&self.host_name, "the host name")?;
        host.truncate(HOST_LEN - 1);
        out.extend_from_slice(&host);
        out.resize(BASE_LEN, 0);
        out.extend_from_slice(&user);
        out.extend_from_slice(&password);
        Ok(out)
    }

    /// How many bytes the message starting with `head` (its first two) takes, checked before
    /// they are waited for.
    pub fn length(head: [u8; 2]) -> Result<usize, InfoError> {
        let length = usize::from(u16::from_le_bytes(head));
        if !(BASE_LEN..=MAX_LEN).contains(&length) {
            return Err(InfoError::Length(length));
        }
        Ok(length)
    }

    pub fn decode(b: &[u8]) -> Result<ConnectInfo, InfoError> {
        let head = b.get(..2).ok_or(InfoError::Length(b.len()))?;
        let length = ConnectInfo::length([head[0], head[1]])?;
        if b.len() != length {
            return Err(InfoError::Length(b.len()));
        }
        let (user, password) = (usize::from(b[12]), usize::from(b[13]));
        if BASE_LEN + user + password > length {
            return Err(InfoError::Strings {
                length,
                user,
                password,
            });
        }
        let mut net_id = [0u8; 6];
        net_id.copy_from_slice(&b[6..12]);
        let host = &b[32..BASE_LEN];
        let host = &host[..host.iter().position(|&c| c == 0).unwrap_or(HOST_LEN)];
        let credentials = (user + password > 0).then(|| {
            (
                from_ansi(&b[BASE_LEN..BASE_LEN + user]),
                from_ansi(&b[BASE_LEN + user..BASE_LEN + user + password]),
            )
        });
        Ok(ConnectInfo {
            flags: u16::from_le_bytes([b[2], b[3]]),
            version: b[4],
            error: b[5],
            net_id: AmsNetId(net_id),
            host_name: from_ansi(host),
            credentials,
        })
    }
}

/// The bytes TwinCAT reads (the ANSI code page, Windows-1252 on Western systems) for the
/// Latin-1 range; a character beyond it is refused rather than sent as another (a password
/// turned into `?` would be refused by the PLC with no word of why).
fn ansi(s: &str, what: &'static str) -> Result<Vec<u8>, InfoError> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).map_err(|_| InfoError::NotAnsi { what, c }))
        .collect()
}

fn from_ansi(b: &[u8]) -> String {
    b.iter().map(|&c| char::from(c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of the reference client's route-adding request (kevinherron/beckhoff-secure-ads
    /// `TlsConnectInfoSerdeTest`'s layout), written out by hand.
    #[test]
    fn a_route_adding_request_has_the_documented_layout() {
        let info = ConnectInfo::request(
            flag::ADD_REMOTE | flag::SELF_SIGNED | flag::IP_ADDR | flag::IGNORE_CN,
            AmsNetId([192, 168, 1, 10, 1, 1]),
            "laptop",
            Some(("Administrator".into(), "1".into())),
        );
        let b = info.encode().expect("encodes");
        assert_eq!(b.len(), 64 + 13 + 1);
        assert_eq!(&b[..2], &78u16.to_le_bytes());
        assert_eq!(&b[2..4], &[0xF0, 0x00]);
        assert_eq!(b[4], 1);
        assert_eq!(b[5], 0);
        assert_eq!(&b[6..12], &[192, 168, 1, 10, 1, 1]);
        assert_eq!((b[12], b[13]), (13, 1));
        assert!(b[14..32].iter().all(|&c| c == 0));
        assert_eq!(&b[32..38], b"laptop");
        assert!(b[38..64].iter().all(|&c| c == 0));
        assert_eq!(&b[64..], b"Administrator1");
        assert_eq!(ConnectInfo::decode(&b), Ok(info));
    }

    #[test]
    fn an_answer_is_64_bytes_with_the_response_flag_and_its_error() {
        let a = ConnectInfo::response(Some(ConnectError::UnknownUser), AmsNetId::LOCAL, "plc");
        let b = a.encode().expect("encodes");
        assert_eq!(b.len(), 64);
        assert_eq!(b[2] & 1, 1);
        assert_eq!(b[5], 4);
        let back = ConnectInfo::decode(&b).expect("decodes");
        assert_eq!(back.refusal(), Some(ConnectError::UnknownUser));
        let ok = ConnectInfo::response(None, AmsNetId::LOCAL, "plc");
        assert_eq!(ok.refusal(), None);
    }

    #[test]
    fn lengths_outside_64_to_512_and_strings_past_the_end_are_refused() {
        assert_eq!(ConnectInfo::length([63, 0]), Err(InfoError::Length(63)));
        assert_eq!(
            ConnectInfo::length([0x01, 0x02]),
            Err(InfoError::Length(513))
        );
        assert_eq!(
            ConnectInfo::length([0xFF, 0xFF]),
            Err(InfoError::Length(65535))
        );
        let mut b = ConnectInfo::request(0, AmsNetId::LOCAL, "x", None)
            .encode()
            .expect("encodes");
        b[12] = 200;
        assert!(matches!(
            ConnectInfo::decode(&b),
            Err(InfoError::Strings { user: 200, .. })
        ));
        let long = "x".repeat(256);
        assert!(matches!(
            ConnectInfo::request(0, AmsNetId::LOCAL, "x", Some((long, "p".into()))).encode(),
            Err(InfoError::TooLong { .. })
        ));
    }

    #[test]
    fn strings_beyond_latin_1_are_refused_not_mangled() {
        let r = ConnectInfo::request(
            flag::ADD_REMOTE,
            AmsNetId::LOCAL,
            "laptop",
            Some(("Administrator".into(), "pass€".into())),
        );
        assert!(matches!(
            r.encode(),
            Err(InfoError::NotAnsi {
                what: "the password",
                c: '€'
            })
        ));
        let ok = ConnectInfo::request(0, AmsNetId::LOCAL, "Müller-PC", None);
        let b = ok.encode().expect("Latin-1 encodes");
        assert_eq!(&b[32..42], b"M\xfcller-PC\0");
    }

    proptest::proptest! {
        #[test]
        fn no_bytes_make_decode_panic(b in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = ConnectInfo::decode(&b);
        }
    }
}
