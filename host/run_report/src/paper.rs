//! The AuroraFlow paper's measured figures: Pape, Wintermann, Jungemann, Lass, Meyer,
//! Riebler, Plessl, "AuroraFlow, an Easy-to-Use, Low-Latency FPGA Communication Solution
//! Demonstrated on Multi-FPGA Neural Network Inference", HEART '25,
//! doi 10.1145/3728179.3728190. Measured on Alveo U280 hardware; MobileNet-V1 on two cards.

pub const CITATION: &str =
    "AuroraFlow paper (HEART '25, doi 10.1145/3728179.3728190), measured on U280 hardware";
/// Minimum average link latency.
pub const LINK_LATENCY_US: f64 = 0.51;
/// Average link throughput at 1 MiB messages.
pub const LINK_GBPS: f64 = 95.03;
/// MobileNet-V1 over two U280s.
pub const FPS: f64 = 4460.92;
pub const LATENCY_MS: f64 = 0.89;
