//! The AuroraFlow paper's measured figures, read from `paper/figures.toml` (their one copy,
//! a leaf of the graph: the run report, the deployment report, the FINN flow's report and the
//! partitioner benchmark all read this file and depend on nothing else for it).

use std::sync::OnceLock;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Figures {
    pub citation: String,
    pub link: Link,
    pub ring: Ring,
    pub area: Area,
    pub mobilenet_2fpga: Mobilenet,
    pub elastic_df: ElasticDf,
    pub finn_examples_resnet50: Published,
}

/// One published, measured network accelerator (another work: its citation is its own).
#[derive(Debug, Deserialize)]
pub struct Published {
    pub citation: String,
    pub board: String,
    pub fps: f64,
    pub latency_ms: f64,
}

/// Elastic-DF's MobileNet-V1 figures (another paper: its citation is its own).
#[derive(Debug, Deserialize)]
pub struct ElasticDf {
    pub citation: String,
    pub fps_1cu: f64,
    pub fps_2cu_1card: f64,
    pub fps_3cu_2cards: f64,
}

#[derive(Debug, Deserialize)]
pub struct Link {
    /// Minimum average link latency.
    pub latency_us: f64,
    /// Average link throughput at 1 MiB messages.
    pub gbps: f64,
}

/// The 48-card ring: one message around every card and back.
#[derive(Debug, Deserialize)]
pub struct Ring {
    pub cards: u32,
    /// The message's size, GiB.
    pub message_gib: u64,
    /// Average throughput through the ring.
    pub gbps: f64,
}

#[derive(Debug, Deserialize)]
pub struct Area {
    pub streaming: KernelArea,
    pub framing: KernelArea,
}

/// The place-and-route area of one AuroraFlow kernel.
#[derive(Debug, Deserialize)]
pub struct KernelArea {
    pub lut: u32,
    pub ff: u32,
    pub bram36: u32,
}

#[derive(Debug, Deserialize)]
pub struct Mobilenet {
    pub fps: f64,
    pub latency_ms: f64,
    pub clk_mhz: [u32; 2],
    pub lut: [f64; 2],
    pub bram: [f64; 2],
}

const TOML: &str = include_str!("../figures.toml");

/// The figures (parsed once; the file is compiled in, so a malformed one fails the tests).
pub fn figures() -> &'static Figures {
    static FIGURES: OnceLock<Figures> = OnceLock::new();
    FIGURES
        .get_or_init(|| toml::from_str(TOML).unwrap_or_else(|e| panic!("paper/figures.toml: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_figures_parse() {
        let f = super::figures();
        assert!(f.mobilenet_2fpga.fps > 0.0 && f.link.gbps > 0.0 && f.ring.gbps > 0.0);
    }
}
