//! The state one REAPI client shares between its cache, CAS and execution calls: the
//! configuration, the gRPC clients and their health, the batch limit, and the blobs found
//! corrupt on the server. `client` connects it; `cas` and `execute` use it.

use crate::config::{ClientOptions, ReConfig};
use crate::transport::{Clients, Health};

pub(crate) struct Inner {
    pub cfg: ReConfig,
    pub opts: ClientOptions,
    pub clients: Clients,
    pub health: Health,
    /// Effective batch limit: the smaller of the server's and `max_total_batch_size`.
    pub batch_limit: usize,
    /// Blobs this client found corrupt on the server: re-sent on upload even though
    /// FindMissingBlobs reports them present, so a good copy replaces the bad one.
    pub corrupt_on_server: std::sync::Mutex<std::collections::HashSet<crate::Digest>>,
}
