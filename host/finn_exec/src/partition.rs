//! One exported FINN model (a device's partition or the whole network) ready to run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::datatype::DataType;
use crate::graph::Graph;
use crate::ops::{self, NodeCtx, Op};
use crate::tensor::{numel, Tensor};

/// A graph input or output.
#[derive(Clone, Debug)]
pub struct Port {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: DataType,
}

impl Port {
    /// One frame's dimensions (the shape without its batch dimension), as `d1, d2, ...`.
    pub fn frame_dims(&self) -> String {
        self.shape[1..]
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

struct Step {
    name: String,
    op: Box<dyn Op>,
    inputs: Vec<usize>,
    /// One slot per node output (a fork has several).
    outputs: Vec<usize>,
    /// Slots whose last reader is this step (freed after it).
    frees: Vec<usize>,
}

pub struct Partition {
    pub dir: PathBuf,
    pub name: String,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    input_slots: Vec<usize>,
    output_slots: Vec<usize>,
    slots: usize,
    steps: Vec<Step>,
    op_types: Vec<String>,
}

impl Partition {
    /// Loads `dir/graph.json` and builds every node; all checks happen here, so `run`
    /// only fails on bad input.
    pub fn load(dir: impl AsRef<Path>) -> Result<Partition> {
        let dir = dir.as_ref();
        let graph = Graph::load(dir)?;
        let ctx_err = |e: anyhow::Error| e.context(format!("{}", dir.join("graph.json").display()));
        let mut slot_of: HashMap<String, usize> = HashMap::new();
        let mut producer: HashMap<&str, &str> = HashMap::new();
        let port = |name: &String| -> Result<Port> {
            let info = graph.tensor(name)?;
            Ok(Port {
                name: name.clone(),
                shape: info.shape.clone(),
                dtype: graph.dtype(name)?,
            })
        };
        let inputs: Vec<Port> = graph
            .file
            .inputs
            .iter()
            .map(port)
            .collect::<Result<_>>()
            .map_err(ctx_err)?;
        let outputs: Vec<Port> = graph
            .file
            .outputs
            .iter()
            .map(port)
            .collect::<Result<_>>()
            .map_err(ctx_err)?;
        for p in &inputs {
            let n = slot_of.len();
            slot_of.insert(p.name.clone(), n);
        }
        let mut steps = Vec::new();
        let mut op_types = Vec::new();
        for node in &graph.file.nodes {
            let ctx = NodeCtx {
                graph: &graph,
                node,
                producer: node
                    .inputs
                    .first()
                    .and_then(|i| producer.get(i.as_str()).copied()),
            };
            let built = ops::build(&ctx).map_err(ctx_err)?;
            let ins = built
                .inputs
                .iter()
                .map(|t| {
                    slot_of.get(t).copied().ok_or_else(|| {
                        anyhow!(
                            "{}: node {} reads {t}, which no earlier node produces",
                            dir.display(),
                            node.name
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let outputs = node
                .outputs
                .iter()
                .map(|out| {
                    let n = slot_of.len();
                    producer.insert(out.as_str(), node.op_type.as_str());
                    *slot_of.entry(out.clone()).or_insert(n)
                })
                .collect();
            steps.push(Step {
                name: node.name.clone(),
                op: built.op,
                inputs: ins,
                outputs,
                frees: Vec::new(),
            });
            if !op_types.contains(&node.op_type) {
                op_types.push(node.op_type.clone());
            }
        }
        let input_slots: Vec<usize> = inputs.iter().map(|p| slot_of[&p.name]).collect();
        let output_slots = outputs
            .iter()
            .map(|p| {
                slot_of.get(&p.name).copied().ok_or_else(|| {
                    anyhow!(
                        "{}: graph output {} is produced by no node",
                        dir.display(),
                        p.name
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // Free each intermediate after its last reader, so a frame's memory stays small.
        let mut last_use: HashMap<usize, usize> = HashMap::new();
        for (i, s) in steps.iter().enumerate() {
            for &slot in &s.inputs {
                last_use.insert(slot, i);
            }
        }
        for (slot, i) in last_use {
            if !output_slots.contains(&slot) {
                steps[i].frees.push(slot);
            }
        }
        Ok(Partition {
            dir: dir.to_path_buf(),
            name: graph.file.name.clone(),
            inputs,
            outputs,
            input_slots,
            output_slots,
            slots: slot_of.len(),
            steps,
            op_types,
        })
    }

    pub fn inputs(&self) -> &[Port] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[Port] {
        &self.outputs
    }

    /// Values per frame of the single input / output (what `run_frame` takes / returns).
    pub fn frame_in_len(&self) -> usize {
        self.inputs.first().map_or(0, |p| numel(&p.shape))
    }

    pub fn frame_out_len(&self) -> usize {
        self.outputs.first().map_or(0, |p| numel(&p.shape))
    }

    /// The op types this graph contains, in first-use order.
    pub fn op_types(&self) -> &[String] {
        &self.op_types
    }

    /// Runs one frame: one tensor per graph input (in order), one per output.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        if inputs.len() != self.inputs.len() {
            bail!(
                "{}: {} inputs given, the graph has {}",
                self.dir.display(),
                inputs.len(),
                self.inputs.len()
            );
        }
        let mut slots: Vec<Option<Tensor>> = (0..self.slots).map(|_| None).collect();
        for ((port, t), &slot) in self.inputs.iter().zip(inputs).zip(&self.input_slots) {
            check_input(port, t).with_context(|| format!("{}", self.dir.display()))?;
            slots[slot] = Some(Tensor::new(port.shape.clone(), t.data.clone()));
        }
        for step in &self.steps {
            let args: Vec<&Tensor> = step
                .inputs
                .iter()
                .map(|&s| slots[s].as_ref().expect("produced before use"))
                .collect();
            let outs = step
                .op
                .run_outputs(&args)
                .with_context(|| format!("{}: node {}", self.dir.display(), step.name))?;
            for (&slot, out) in step.outputs.iter().zip(outs) {
                slots[slot] = Some(out);
            }
            for &s in &step.frees {
                slots[s] = None;
            }
        }
        Ok(self
            .output_slots
            .iter()
            .map(|&s| slots[s].clone().expect("graph output produced"))
            .collect())
    }

    /// One frame through a single-input, single-output graph, values as i64 (the
    /// per-frame function the host's device runtime wraps).
    pub fn run_frame(&self, input: &[i64]) -> Result<Vec<i64>> {
        if self.inputs.len() != 1 || self.outputs.len() != 1 {
            bail!(
                "{}: run_frame needs one input and one output (use run)",
                self.dir.display()
            );
        }
        let port = &self.inputs[0];
        let data = input
            .iter()
            .map(|&v| {
                i32::try_from(v).map_err(|_| anyhow!("input {}: value {v} out of range", port.name))
            })
            .collect::<Result<Vec<i32>>>()?;
        let out = self.run(&[Tensor::new_checked(port, data)?])?;
        Ok(out[0].data.iter().map(|&v| v as i64).collect())
    }

    /// As `run_frame`, for byte inputs (UINT8 images).
    pub fn run_frame_u8(&self, input: &[u8]) -> Result<Vec<i64>> {
        let v: Vec<i64> = input.iter().map(|&b| b as i64).collect();
        self.run_frame(&v)
    }
}

impl Tensor {
    /// A tensor for `port` from flat data, checking the element count.
    pub fn new_checked(port: &Port, data: Vec<i32>) -> Result<Tensor> {
        if data.len() != numel(&port.shape) {
            bail!(
                "input {}: {} values given, shape {:?} needs {}",
                port.name,
                data.len(),
                port.shape,
                numel(&port.shape)
            );
        }
        Ok(Tensor::new(port.shape.clone(), data))
    }
}

fn check_input(port: &Port, t: &Tensor) -> Result<()> {
    if t.len() != numel(&port.shape) {
        bail!(
            "input {}: {} values given, shape {:?} needs {}",
            port.name,
            t.len(),
            port.shape,
            numel(&port.shape)
        );
    }
    if port.dtype.is_integer() {
        if let Some((i, &v)) = t
            .data
            .iter()
            .enumerate()
            .find(|(_, &v)| !port.dtype.allows(v as i64))
        {
            bail!(
                "input {}: value {v} at flat index {i} is outside its datatype {}",
                port.name,
                port.dtype
            );
        }
    }
    Ok(())
}
