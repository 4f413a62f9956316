//! `deploy-tool`: one deployment description (`deploy/<name>.toml`) turned into the
//! partitioner's inputs, per-FPGA v++ link configurations and simulated device descriptions,
//! the Slurm job and run scripts, the topology, an HTML report and the bundle that takes them
//! to the cluster, each checked first.

pub mod board_checks;
pub mod budget;
pub mod bundle;
pub mod cabling;
pub mod commands;
pub mod deployment;
pub mod diag;
pub mod fields;
pub mod finn_path;
pub mod flow_control;
pub mod format;
pub mod hls_app;
pub mod instances;
pub mod iodma;
pub mod kernel;
pub mod linkcfg;
pub mod one_card;
pub mod partitioner;
pub mod plan;
pub mod platform;
pub mod replicas;
pub mod report;
pub mod scripts;
pub mod slr;
pub mod slurm;
pub mod validate;
pub mod vpp_link;
