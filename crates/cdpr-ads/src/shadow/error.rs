//! What stops a shadow: what retrying cannot fix.

use super::record::RecordError;
use crate::link::ControllerError;
use crate::wire::AmsAddr;
use cdpr_core::robot::{GeometryError, RobotFileError};
use cdpr_core::sim::SimError;

#[derive(Debug, thiserror::Error)]
pub enum ShadowError {
    #[error(transparent)]
    Controller(#[from] ControllerError),
    #[error("the robot file does not fit the controller: {0}")]
    Geometry(#[from] GeometryError),
    /// The robot file's `[plc]` section is wrong.
    #[error(transparent)]
    Names(#[from] RobotFileError),
    #[error("physics: {0}")]
    Sim(#[from] SimError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(
        "after the reconnect the anchors of cable {cable} are {moved_mm:.3} mm from where they were: the controller drives another geometry now; restart the shadow"
    )]
    GeometryChanged { cable: usize, moved_mm: f64 },
    #[error("the controller has {now} cables now, {before} at start; restart the shadow")]
    CableCountChanged { before: usize, now: usize },
    #[error("{0}")]
    Config(String),
    /// The link went down and stayed down past the link's timeout until the run ended.
    #[error(
        "the PLC was lost at {at_s:.3} s (shadow time) and not regained in the {for_s:.3} s \
         before the run ended: the record ends with a gap row there"
    )]
    Lost { at_s: f64, for_s: f64 },
    #[error("connecting to the PLC")]
    Connect {
        endpoint: String,
        #[source]
        source: ControllerError,
    },
    #[error("creating the record {}", path.display())]
    RecordFile {
        path: std::path::PathBuf,
        #[source]
        source: RecordError,
    },
    /// The PLC took the TCP connection but answered no ADS request: TwinCAT without a route
    /// for this PC closes such connections at once (or lets them time out).
    #[error(
        "{endpoint} accepted the connection but answered no ADS request from {source_addr} \
         ({cause}): the PLC most likely has no route for this PC — add one naming AMS NetId \
         {source_net_id} and this PC's address (from here: `cdpr route add --plc HOST \
         --password PASSWORD`; TwinCAT: SYSTEM → Routes → Add Route; see \
         assets/twincat/README.md, section 2), or check that {target} is the PLC's AMS address \
         (--ams-net-id, --ams-port)"
    )]
    NoRoute {
        endpoint: String,
        source_addr: String,
        source_net_id: String,
        target: AmsAddr,
        cause: String,
    },
    /// The router answered that the AMS address asked for is not there (ADS 0x6/0x7).
    #[error("{0}")]
    Target(String),
    #[error("resolving the shadow's symbols on {target}")]
    Resolve {
        target: AmsAddr,
        #[source]
        source: ControllerError,
    },
}
