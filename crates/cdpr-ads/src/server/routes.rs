//! The virtual PLC's route table: who added a route over the UDP service ([`super::udp`]), and
//! what the AMS/TCP server consults when told to serve only clients with a route
//! (`--require-route`: [`super::ServerConfig::require_route`]).
//!
//! Shared (an `Arc` around a `Mutex`): the UDP responder writes it, the TCP server and the
//! command line read it. Bounded: [`RouteTable::MAX`] routes, each string at most
//! [`RouteTable::MAX_TEXT`] bytes.

use crate::wire::AmsNetId;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// One route: a peer that may talk ADS to the PLC.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Route {
    /// The peer's AMS NetId (the source NetId of its AMS frames).
    #[serde(serialize_with = "as_text")]
    pub net_id: AmsNetId,
    /// The route's name on the PLC (TwinCAT shows it under SYSTEM → Routes).
    pub name: String,
    /// The address the PLC dials back: the add-route's computer name (an IP or host name).
    pub host: String,
    /// A temporary route (TwinCAT forgets it at restart; the virtual PLC at exit anyway).
    pub temporary: bool,
    /// Where the add-route request came from (`None`: added through the library).
    pub from: Option<SocketAddr>,
}

fn as_text<S: serde::Serializer>(id: &AmsNetId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(id)
}

/// What [`RouteTable::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    /// A route of the same name or NetId was replaced (TwinCAT updates it in place too).
    Replaced,
}

/// The table is full ([`RouteTable::MAX`] routes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the route table holds {} routes already", RouteTable::MAX)]
pub struct TableFull;

/// The routes of one virtual PLC; clones share the table.
#[derive(Debug, Clone, Default)]
pub struct RouteTable(Arc<Mutex<Vec<Route>>>);

impl RouteTable {
    /// Most routes held.
    pub const MAX: usize = 256;
    /// Longest name or host kept, bytes (longer ones are cut at a character boundary).
    pub const MAX_TEXT: usize = 255;

    pub fn new() -> RouteTable {
        RouteTable::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Route>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `route`, replacing one of the same name or NetId.
    pub fn add(&self, mut route: Route) -> Result<Added, TableFull> {
        route.name = cut(route.name);
        route.host = cut(route.host);
        let mut routes = self.lock();
        let before = routes.len();
        routes.retain(|r| r.name != route.name && r.net_id != route.net_id);
        let added = if routes.len() < before {
            Added::Replaced
        } else if routes.len() >= Self::MAX {
            return Err(TableFull);
        } else {
            Added::New
        };
        routes.push(route);
        Ok(added)
    }

    /// Whether a route names `net_id`.
    pub fn contains(&self, net_id: AmsNetId) -> bool {
        self.lock().iter().any(|r| r.net_id == net_id)
    }

    /// The routes, oldest first.
    pub fn list(&self) -> Vec<Route> {
        self.lock().clone()
    }
}

/// `text` cut to [`RouteTable::MAX_TEXT`] bytes at a character boundary.
fn cut(mut text: String) -> String {
    if text.len() > RouteTable::MAX_TEXT {
        let mut end = RouteTable::MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(name: &str, id: u8) -> Route {
        Route {
            net_id: AmsNetId([10, 0, 0, id, 1, 1]),
            name: name.into(),
            host: format!("10.0.0.{id}"),
            temporary: false,
            from: None,
        }
    }

    #[test]
    fn routes_are_added_replaced_by_name_or_net_id_and_bounded() {
        let table = RouteTable::new();
        let shared = table.clone();
        assert_eq!(table.add(route("a", 1)), Ok(Added::New));
        assert_eq!(table.add(route("b", 2)), Ok(Added::New));
        assert!(shared.contains(AmsNetId([10, 0, 0, 2, 1, 1])));
        assert_eq!(table.add(route("a", 3)), Ok(Added::Replaced));
        assert!(!shared.contains(AmsNetId([10, 0, 0, 1, 1, 1])));
        assert_eq!(table.add(route("c", 2)), Ok(Added::Replaced));
        let names: Vec<String> = shared.list().into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["a", "c"]);
        for k in 0..RouteTable::MAX {
            let mut r = route(&format!("r{k}"), 0);
            r.net_id = AmsNetId([1, 2, (k >> 8) as u8, k as u8, 1, 1]);
            let _ = table.add(r);
        }
        assert_eq!(table.list().len(), RouteTable::MAX);
        assert_eq!(table.add(route("one more", 200)), Err(TableFull));
        let long = table.add(Route {
            name: "é".repeat(200),
            net_id: AmsNetId([1, 2, 0, 0, 1, 1]),
            ..route("r0", 0)
        });
        assert_eq!(long, Ok(Added::Replaced));
        assert!(
            table
                .list()
                .iter()
                .all(|r| r.name.len() <= RouteTable::MAX_TEXT)
        );
    }
}
