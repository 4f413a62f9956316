//! Latency and throughput of a FINN dataflow pipeline spread over FPGAs and AuroraFlow
//! links, at row granularity, by two independent methods:
//!
//! - `analytic`: closed form. FPS = the slowest stage's frame rate; latency = when every
//!   stage has seen enough of its input for its first output row (its fill), plus the time
//!   the rest of the frame takes to stream through the slowest stage, plus link latencies;
//! - `des`: a discrete-event simulation of the same stages with bounded FIFOs between them,
//!   over many frames, giving per-frame latencies and the steady-state FPS.
//!
//! `deployment` builds the stages from a partition plan (cycles, folding, devices, cuts),
//! the executor graphs (layer geometry) and the topology (clocks, cables); `link` derives an
//! AuroraFlow link's latency and bandwidth from the link model the simulator runs.
//!
//! `whole` models and simulates a replica deployment's copies together, sharing each card's
//! PCIe link to the host (`host_link`).

pub mod analytic;
pub mod deployment;
pub mod des;
pub mod geometry;
pub mod host_link;
pub mod link;
pub mod pipeline;
pub mod whole;

pub use analytic::{analyse, Analysis};
pub use deployment::{load, Deployment};
pub use des::{simulate, simulate_fed, DesConfig, DesResult};
pub use host_link::HostLink;
pub use pipeline::{Pipeline, Stage, StageKind};
pub use whole::{analyse_whole, simulate_whole, CopyPipeline, Whole, WholeAnalysis, WholeResult};
