//! What the engine's and the deployment's tests share: a real BuildGrid server per test, test
//! files, TLS certificates and a flaky network. A dev-dependency only; nothing ships it.

mod buildgrid;
mod files;
mod flaky_proxy;
mod tls;

pub use buildgrid::{bgd, workspace_root, BuildGrid};
pub use files::{peak_rss_kib, sha256sum, write_random_file};
pub use flaky_proxy::{Direction, FlakyProxy};
pub use tls::make_certs;
