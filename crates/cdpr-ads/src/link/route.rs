//! Adding a route on a TwinCAT system over the ADS UDP service, as TwinCAT's "Add Route"
//! dialog, Beckhoff's `adstool addroute` and pyads' `add_route_to_plc` do: the PLC is told
//! that this machine (its NetId, its address) may talk ADS to it, with the PLC's user name and
//! password as the proof.
//!
//! TwinCAT answers a status: 0 (added; an existing route of the same name is updated, there
//! is no "exists" answer), 0x704 ADSERR_DEVICE_INVALIDACCESS for a wrong user name or password
//! (pyads issue #460, tvogel/ads-target-browser-qt), other ADS codes for other refusals.

use super::udp_service::{self, Send, UdpServiceError};
use crate::wire::error::{self as codes, INVALID_ACCESS, NO_ERROR};
use crate::wire::udp::{UdpMessage, service, tag};
use crate::wire::{AmsAddr, AmsNetId};
use std::net::SocketAddr;
use std::time::Duration;

/// An add-route request.
#[derive(Debug, Clone)]
pub struct RouteRequest {
    /// The PLC: HOST or HOST:PORT (the service's 48899 by default).
    pub plc: String,
    /// The PLC's user name and password (TwinCAT's factory default: Administrator / 1).
    pub user: String,
    pub password: String,
    /// This machine's AMS NetId: the source NetId of its AMS frames.
    pub net_id: AmsNetId,
    /// This machine's address as the PLC should dial it: an IP address (safer) or host name.
    pub host: String,
    /// The route's name on the PLC (default: `host`).
    pub route_name: Option<String>,
    /// A temporary route (TwinCAT forgets it at restart).
    pub temporary: bool,
    pub timeout: Duration,
}

/// The longest user name, password, host or route name sent, bytes (TwinCAT's route names
/// are shorter still; the limit keeps the datagram small).
pub const MAX_TEXT: usize = 255;

/// Why no route was added.
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error(
        "{plc} refused the user name or password (ADS 0x704, access denied): give the PLC's \
         --user and --password (TwinCAT on Windows: a Windows user of the PLC, factory default \
         Administrator / 1; TwinCAT/BSD: the user set at installation)"
    )]
    Credentials { plc: SocketAddr },
    #[error("{plc} refused the route: ADS error {code:#x} ({text})")]
    Refused {
        plc: SocketAddr,
        code: u32,
        text: &'static str,
    },
    #[error(
        "{plc} answered the add-route without a status: not the ADS UDP service as TwinCAT \
         speaks it"
    )]
    NoStatus { plc: SocketAddr },
    #[error("the {what} is {len} bytes long; at most {MAX_TEXT} are sent")]
    TooLong { what: &'static str, len: usize },
    #[error(transparent)]
    Service(#[from] UdpServiceError),
}

/// What the PLC said when it added the route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteAdded {
    /// The PLC's own NetId (the reply's source).
    pub plc_net_id: AmsNetId,
    /// Where the reply came from.
    pub plc: SocketAddr,
    pub route_name: String,
}

/// Asks the PLC to add a route to this machine; its answer, or why not.
pub fn add_route(r: &RouteRequest) -> Result<RouteAdded, RouteError> {
    let route_name = r.route_name.clone().unwrap_or_else(|| r.host.clone());
    for (what, text) in [
        ("user name", &r.user),
        ("password", &r.password),
        ("host name", &r.host),
        ("route name", &route_name),
    ] {
        if text.len() > MAX_TEXT {
            return Err(RouteError::TooLong {
                what,
                len: text.len(),
            });
        }
    }
    // The items in the order Beckhoff's AdsLib sends them.
    let mut request = UdpMessage::new(service::ADD_ROUTE, 0, AmsAddr::new(r.net_id, 0))
        .with_str(tag::ROUTE_NAME, &route_name)
        .with_bytes(tag::NET_ID, &r.net_id.0)
        .with_str(tag::USER_NAME, &r.user)
        .with_str(tag::PASSWORD, &r.password)
        .with_str(tag::COMPUTER_NAME, &r.host);
    if r.temporary {
        request = request.with_u32(tag::OPTIONS, 1);
    }
    let to = udp_service::resolve_one(&r.plc)?;
    let replies = udp_service::exchange(request, Send::To(to), r.timeout)?;
    let Some((reply, plc)) = replies.into_iter().next() else {
        return Err(UdpServiceError::NoAnswer {
            target: to.to_string(),
            timeout: r.timeout,
        }
        .into());
    };
    match reply.get_u32(tag::STATUS) {
        Some(NO_ERROR) => Ok(RouteAdded {
            plc_net_id: reply.source.net_id,
            plc,
            route_name,
        }),
        Some(INVALID_ACCESS) => Err(RouteError::Credentials { plc }),
        Some(code) => Err(RouteError::Refused {
            plc,
            code,
            text: codes::text(code),
        }),
        None => Err(RouteError::NoStatus { plc }),
    }
}
