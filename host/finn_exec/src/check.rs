//! Comparison against reference outputs of FINN's own Python execution, as written by
//! finn/flow/exec_reference.py (`reference.json` + one `.npy` per tensor and case).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use crate::frames;
use crate::npy;
use crate::partition::{Partition, Port};
use crate::pipeline::Pipeline;
use crate::tensor::Tensor;

pub const REFERENCE_FORMAT: &str = "auroraforge-finn-exec-reference/1";

#[derive(Deserialize)]
struct Case {
    name: String,
    /// A device name, "whole", or "@chain" (all partitions in order).
    model: String,
    inputs: BTreeMap<String, String>,
    outputs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct ReferenceFile {
    format: String,
    frames: usize,
    cases: Vec<Case>,
}

pub struct CaseResult {
    pub name: String,
    pub frames: usize,
    pub values: usize,
    pub mismatches: Vec<String>,
}

fn load_frames(dir: &Path, file: &str, port: &Port, frames: usize) -> Result<Vec<Tensor>> {
    let a = npy::read(&dir.join(file))?;
    let data = a.integers(file)?;
    let t = frames::split(port, &a.shape, data)?;
    if t.len() != frames {
        bail!("{file}: {} frames, reference.json says {frames}", t.len());
    }
    Ok(t)
}

fn port_named<'a>(ports: &'a [Port], name: &str, what: &str) -> Result<&'a Port> {
    ports
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| anyhow!("{what} has no tensor {name}"))
}

/// Runs every case of `reference_dir` on the executor models in `exec_dir`.
pub fn check(exec_dir: &Path, reference_dir: &Path) -> Result<Vec<CaseResult>> {
    let path = reference_dir.join("reference.json");
    let text =
        fs::read_to_string(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    let rf: ReferenceFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a reference", path.display()))?;
    if rf.format != REFERENCE_FORMAT {
        bail!(
            "{}: format {:?}, expected {REFERENCE_FORMAT:?}",
            path.display(),
            rf.format
        );
    }
    let pipeline = Pipeline::load(exec_dir)?;
    let whole = pipeline.whole()?;
    let mut results = Vec::new();
    for case in &rf.cases {
        let partition;
        let (in_ports, out_ports): (Vec<Port>, Vec<Port>) = match case.model.as_str() {
            "@chain" => {
                let mut outs: Vec<Port> = Vec::new();
                for s in &pipeline.stages {
                    outs.extend(s.partition.outputs().iter().cloned());
                }
                (pipeline.inputs().to_vec(), outs)
            }
            "whole" => (whole.inputs().to_vec(), whole.outputs().to_vec()),
            device => {
                let stage = pipeline
                    .stages
                    .iter()
                    .find(|s| s.device == device)
                    .ok_or_else(|| {
                        anyhow!(
                            "case {}: no partition {device} in {}",
                            case.name,
                            exec_dir.display()
                        )
                    })?;
                partition = &stage.partition;
                (partition.inputs().to_vec(), partition.outputs().to_vec())
            }
        };
        let what = format!("case {} ({})", case.name, case.model);
        let mut inputs = Vec::new();
        for p in &in_ports {
            let file = case
                .inputs
                .get(&p.name)
                .ok_or_else(|| anyhow!("{what}: no reference input {}", p.name))?;
            inputs.push(load_frames(reference_dir, file, p, rf.frames)?);
        }
        let mut expected = Vec::new();
        for (name, file) in &case.outputs {
            let p = port_named(&out_ports, name, &what)?;
            expected.push((
                name.clone(),
                load_frames(reference_dir, file, p, rf.frames)?,
            ));
        }
        let mut mismatches = Vec::new();
        let mut values = 0;
        for f in 0..rf.frames {
            let feed: Vec<Tensor> = inputs.iter().map(|t| t[f].clone()).collect();
            let got = run_case(&case.model, &pipeline, &whole, &feed, &case.model)
                .with_context(|| what.clone())?;
            for (name, exp) in &expected {
                let g = got
                    .get(name)
                    .ok_or_else(|| anyhow!("{what}: executor produced no {name}"))?;
                values += exp[f].len();
                if let Some(i) = (0..g.len()).find(|&i| g.data[i] != exp[f].data[i]) {
                    mismatches.push(format!(
                        "frame {f} tensor {name}: first difference at flat index {i}: executor {} FINN {}",
                        g.data[i], exp[f].data[i]
                    ));
                }
            }
        }
        results.push(CaseResult {
            name: case.name.clone(),
            frames: rf.frames,
            values,
            mismatches,
        });
    }
    Ok(results)
}

fn run_case(
    model: &str,
    pipeline: &Pipeline,
    whole: &Partition,
    feed: &[Tensor],
    device: &str,
) -> Result<BTreeMap<String, Tensor>> {
    let (ports, outs): (&[Port], Vec<Tensor>) = match model {
        "@chain" => return Ok(pipeline.run_all(feed)?.into_iter().collect()),
        "whole" => (whole.outputs(), whole.run(feed)?),
        _ => {
            let p = &pipeline
                .stages
                .iter()
                .find(|s| s.device == device)
                .expect("checked")
                .partition;
            (p.outputs(), p.run(feed)?)
        }
    };
    Ok(ports.iter().map(|p| p.name.clone()).zip(outs).collect())
}
