//! BuildGrid 0.4.4 as this project runs it: the configuration rendered from one place
//! ([`config`]), the PostgreSQL its scheduler needs ([`postgres`]), and the server with
//! everything it started ([`grid`]). `forge-re-grid serve` (src/main.rs) runs it in the
//! foreground; the tests start it through this library.

pub mod config;
pub mod grid;
pub mod listen;
pub mod postgres;
pub mod tools;

pub use config::{Config, Execution, Tls};
pub use grid::{Grid, Options};
