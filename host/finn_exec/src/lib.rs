//! Functional executor of FINN HW-layer graphs (finn-plus 1.6.1), bit-exact with
//! FINN's Python execution of the same models.
//!
//! A model is a directory exported by finn/flow/export_exec.py: `graph.json` and
//! `tensors/*.f32` for one partition (or the unpartitioned model), `exec.json` above
//! them for a whole partitioned network. [`Partition::load`] + [`Partition::run_frame`]
//! is the per-frame interface a device runtime wraps; [`Pipeline`] chains partitions.

pub mod check;
pub mod datatype;
pub mod frames;
pub mod graph;
pub mod npy;
pub mod ops;
pub mod partition;
pub mod pipeline;
pub mod tensor;

pub use datatype::DataType;
pub use partition::{Partition, Port};
pub use pipeline::Pipeline;
pub use tensor::Tensor;
