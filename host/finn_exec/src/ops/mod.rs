//! One module per FINN HW op type. Each follows that op's `execute_node` in
//! finn-plus 1.6.1 (`finn/custom_op/fpgadataflow/<op>.py`), which is the reference.

mod duplicatestreams;
mod elementwise;
mod fmpadding;
mod globalaccpool;
mod labelselect;
mod mvau;
mod passthrough;
mod pool;
mod swg;
mod threshold;
mod thresholding;
mod vvau;

use anyhow::{anyhow, bail, Result};

use crate::datatype::DataType;
use crate::graph::{Attrs, Graph, Initializer, NodeSpec};
use crate::tensor::Tensor;

/// The op types the executor runs (generic FINN names; `_hls`/`_rtl` variants are
/// exported under these).
pub const SUPPORTED: &[&str] = &[
    "ConvolutionInputGenerator",
    "DuplicateStreams",
    "ElementwiseAdd",
    "ElementwiseSub",
    "ElementwiseMul",
    "ElementwiseMax",
    "FMPadding",
    "GlobalAccPool",
    "LabelSelect",
    "MVAU",
    "Pool",
    "StreamingDataWidthConverter",
    "StreamingFIFO",
    "Thresholding",
    "VVAU",
];

/// An executable node: its dynamic inputs (tensors, in order) produce its output.
pub trait Op: Send + Sync {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor>;

    /// Every output in the node's order; only a fork (DuplicateStreams) has more than one.
    fn run_outputs(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![self.run(inputs)?])
    }
}

/// What an op builder sees of the graph.
pub struct NodeCtx<'a> {
    pub graph: &'a Graph,
    pub node: &'a NodeSpec,
    /// op_type of the node producing input 0 in this graph (None at a graph input).
    pub producer: Option<&'a str>,
}

impl<'a> NodeCtx<'a> {
    pub fn attrs(&self) -> Attrs<'a> {
        Attrs { node: self.node }
    }

    pub fn name(&self) -> &str {
        &self.node.name
    }

    pub fn input(&self, i: usize) -> Result<&'a str> {
        self.node
            .inputs
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| anyhow!("node {}: has no input {i}", self.node.name))
    }

    pub fn initializer(&self, i: usize) -> Result<&'a Initializer> {
        let name = self.input(i)?;
        self.graph.initializers.get(name).ok_or_else(|| {
            anyhow!(
                "node {}: input {i} ({name}) must be an initializer",
                self.node.name
            )
        })
    }

    pub fn is_initializer(&self, i: usize) -> bool {
        self.input(i)
            .is_ok_and(|n| self.graph.initializers.contains_key(n))
    }

    pub fn in_shape(&self, i: usize) -> Result<Vec<usize>> {
        Ok(self.graph.tensor(self.input(i)?)?.shape.clone())
    }

    pub fn in_dtype(&self, i: usize) -> Result<DataType> {
        self.graph.dtype(self.input(i)?)
    }

    pub fn out_shape(&self) -> Result<Vec<usize>> {
        let out = self
            .node
            .outputs
            .first()
            .ok_or_else(|| anyhow!("node {}: no output", self.node.name))?;
        Ok(self.graph.tensor(out)?.shape.clone())
    }
}

/// A built node and the names of the tensors it reads at run time.
pub struct Built {
    pub op: Box<dyn Op>,
    pub inputs: Vec<String>,
}

fn first_input(ctx: &NodeCtx, op: Box<dyn Op>) -> Result<Built> {
    Ok(Built {
        op,
        inputs: vec![ctx.input(0)?.to_string()],
    })
}

pub fn build(ctx: &NodeCtx) -> Result<Built> {
    if ctx.node.outputs.len() != 1 && ctx.node.op_type != "DuplicateStreams" {
        bail!(
            "node {}: {} outputs; the executor supports single-output ops and DuplicateStreams",
            ctx.name(),
            ctx.node.outputs.len()
        );
    }
    match ctx.node.op_type.as_str() {
        "MVAU" => first_input(ctx, Box::new(mvau::Mvau::new(ctx)?)),
        "VVAU" => first_input(ctx, Box::new(vvau::Vvau::new(ctx)?)),
        "Thresholding" => first_input(ctx, Box::new(thresholding::Thresholding::new(ctx)?)),
        "ConvolutionInputGenerator" => first_input(ctx, Box::new(swg::Swg::new(ctx)?)),
        "FMPadding" => first_input(ctx, Box::new(fmpadding::FmPadding::new(ctx)?)),
        "Pool" => first_input(ctx, Box::new(pool::Pool::new(ctx)?)),
        "GlobalAccPool" => first_input(ctx, Box::new(globalaccpool::GlobalAccPool::new(ctx)?)),
        "LabelSelect" => first_input(ctx, Box::new(labelselect::LabelSelect::new(ctx)?)),
        "DuplicateStreams" => {
            first_input(ctx, Box::new(duplicatestreams::DuplicateStreams::new(ctx)?))
        }
        "StreamingDataWidthConverter" | "StreamingFIFO" => {
            first_input(ctx, Box::new(passthrough::Passthrough::new(ctx)?))
        }
        t if t.starts_with("Elementwise") => elementwise::build(ctx),
        other => bail!(
            "node {}: op type {other} is not supported by the executor (supported: {})",
            ctx.name(),
            SUPPORTED.join(", ")
        ),
    }
}

/// Saturating-free conversion of an accumulator to the i32 container, with the node
/// named if a value cannot be held (it would not be exact in FINN's float32 either).
#[inline]
pub(crate) fn to_i32(node: &str, v: i64) -> Result<i32> {
    i32::try_from(v)
        .map_err(|_| anyhow!("node {node}: value {v} does not fit the executor's i32 activations"))
}

/// FINN's Python execution computes in float32: integers are exact up to 2^24. The
/// executor refuses a layer whose accumulator could leave that range, because there
/// FINN itself rounds and the integer result would differ.
pub(crate) const F32_EXACT: i64 = 1 << 24;

pub(crate) fn check_exact(node: &str, bound: i64) -> Result<()> {
    if bound > F32_EXACT {
        bail!(
            "node {node}: accumulator magnitude can reach {bound} > 2^24, where FINN's float32 \
             Python execution is no longer exact; bit-exact execution is not possible"
        );
    }
    Ok(())
}
