//! The exported partitions of one network in pipeline order (`exec.json`), run one
//! after another, plus the unpartitioned model beside them.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use crate::graph::FORMAT;
use crate::partition::{Partition, Port};
use crate::tensor::Tensor;

#[derive(Deserialize)]
struct StageFile {
    device: String,
    dir: String,
}

#[derive(Deserialize)]
struct ExecFile {
    format: String,
    partitions: Vec<StageFile>,
    whole: Option<String>,
}

pub struct Stage {
    pub device: String,
    pub partition: Partition,
}

pub struct Pipeline {
    pub dir: PathBuf,
    pub stages: Vec<Stage>,
    whole_dir: Option<PathBuf>,
}

impl Pipeline {
    pub fn load(dir: impl AsRef<Path>) -> Result<Pipeline> {
        let dir = dir.as_ref();
        let path = dir.join("exec.json");
        let text = fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let file: ExecFile = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an executor manifest", path.display()))?;
        if file.format != FORMAT {
            bail!(
                "{}: format {:?}, this executor reads {FORMAT:?}",
                path.display(),
                file.format
            );
        }
        if file.partitions.is_empty() {
            bail!("{}: lists no partitions", path.display());
        }
        let stages = file
            .partitions
            .iter()
            .map(|s| {
                Ok(Stage {
                    device: s.device.clone(),
                    partition: Partition::load(dir.join(&s.dir))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Pipeline {
            dir: dir.to_path_buf(),
            stages,
            whole_dir: file.whole.map(|w| dir.join(w)),
        })
    }

    /// The unpartitioned model exported beside the partitions.
    pub fn whole(&self) -> Result<Partition> {
        let d = self
            .whole_dir
            .as_ref()
            .ok_or_else(|| anyhow!("{}: no unpartitioned model", self.dir.display()))?;
        Partition::load(d)
    }

    pub fn inputs(&self) -> &[Port] {
        self.stages[0].partition.inputs()
    }

    pub fn outputs(&self) -> &[Port] {
        self.stages[self.stages.len() - 1].partition.outputs()
    }

    /// Runs the stages in order on the first stage's inputs; returns every tensor that
    /// crossed a cut or left the last stage, by name.
    pub fn run_all(&self, inputs: &[Tensor]) -> Result<HashMap<String, Tensor>> {
        let mut tensors: HashMap<String, Tensor> = HashMap::new();
        for (p, t) in self.inputs().iter().zip(inputs) {
            tensors.insert(p.name.clone(), t.clone());
        }
        for stage in &self.stages {
            let part = &stage.partition;
            let feed = part
                .inputs()
                .iter()
                .map(|p| {
                    tensors.get(&p.name).cloned().ok_or_else(|| {
                        anyhow!(
                            "partition {}: input {} comes from no earlier partition",
                            stage.device,
                            p.name
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let outs = part
                .run(&feed)
                .with_context(|| format!("partition {}", stage.device))?;
            for (p, t) in part.outputs().iter().zip(outs) {
                tensors.insert(p.name.clone(), t);
            }
        }
        Ok(tensors)
    }

    /// The last stage's outputs for the first stage's inputs.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut all = self.run_all(inputs)?;
        Ok(self
            .outputs()
            .iter()
            .map(|p| all.remove(&p.name).expect("last stage output"))
            .collect())
    }
}
