//! What `infer` reports: per image top-1 / top-5 against the unpartitioned reference and
//! bit-exactness, per link the counters over time, the summary text, `outputs.npy` and
//! `run.json` (field names fixed: the run report and the latency model read them).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use finn_exec::graph::Graph;
use finn_exec::npy;
use serde::{Deserialize, Serialize};

use crate::labels::Accuracy;

/// The counters of one AuroraFlow CU at one moment.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Counts {
    pub tx: u64,
    pub rx: u64,
    pub xoff: u64,
    pub xon: u64,
    pub max_in_flight: u64,
    pub overflow: u64,
}

impl From<aurora::Counters> for Counts {
    fn from(c: aurora::Counters) -> Counts {
        Counts {
            tx: c.tx_count as u64,
            rx: c.rx_count as u64,
            xoff: c.nfc_full_trigger as u64,
            xon: c.nfc_empty_trigger as u64,
            max_in_flight: c.nfc_latency as u64,
            overflow: c.fifo_rx_overflow as u64,
        }
    }
}

/// One direction of a link as one rank sees it: the receiving CU (`rx`: RX count, flow
/// control, overflow) or the sending CU (TX count).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinkSample {
    pub name: String,
    pub rx: bool,
    pub samples: Vec<(f64, Counts)>,
    pub last: Counts,
}

/// Everything a rank sends rank 0 after the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankReport {
    pub device: String,
    pub clock_mhz: f64,
    pub links: Vec<LinkSample>,
}

// run.json's records, stated once: the run report reads what this writes.
pub use run_report::run::{
    LinkFinal as Final, LinkSample as Sample, RunDevice as Device, RunFrame as Frame,
    RunLink as Link,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Labels {
    /// LabelSelect (ONNX TopK): the output already holds class indices, best first.
    Indices,
    /// Scores per class: ranked here, ties to the lower index (as TopK).
    Scores,
}

/// Whether the model at `dir` ends in LabelSelect.
pub fn label_output(dir: &Path) -> Result<Labels> {
    let g = Graph::load(dir)?;
    Ok(match g.file.nodes.last() {
        Some(n) if n.op_type == "LabelSelect" => Labels::Indices,
        _ => Labels::Scores,
    })
}

/// The five best classes (fewer if the output has fewer).
pub fn top5(output: &[i64], labels: Labels) -> Vec<i64> {
    match labels {
        Labels::Indices => output.iter().take(5).copied().collect(),
        Labels::Scores => {
            let mut idx: Vec<usize> = (0..output.len()).collect();
            idx.sort_by(|&a, &b| output[b].cmp(&output[a]).then(a.cmp(&b)));
            idx.into_iter().take(5).map(|i| i as i64).collect()
        }
    }
}

/// One image's record: its top-1 / top-5 against the reference's, and whether the tensors
/// are identical.
pub fn frame(index: usize, got: &[i64], want: &[i64], labels: Labels) -> Frame {
    let (top5, reference_top5) = (top5(got, labels), top5(want, labels));
    Frame {
        index: index as i64,
        top1: top5.first().copied().unwrap_or(-1),
        reference_top1: reference_top5.first().copied().unwrap_or(-1),
        top5,
        reference_top5,
        bit_exact: got == want,
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub deployment: String,
    pub command: String,
    pub images: usize,
    pub devices: Vec<Device>,
    pub links: Vec<Link>,
    pub frames: Vec<Frame>,
    pub wall_s: f64,
    /// With --labels: top-1 / top-5 hits of the pipeline and of the unpartitioned model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<Accuracy>,
    /// The model's training record (`weights.rs`); absent: seeded random weights.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training: Option<String>,
    /// A replica deployment: every copy together, modelled and simulated (`finish`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole: Option<run_report::RunWhole>,
    #[serde(skip)]
    pub output_shape: Vec<usize>,
    #[serde(skip)]
    pub labels: Option<Vec<i64>>,
}

/// Both ends of each direction, merged sample by sample (the ranks sample on the same
/// period from the same barrier), then one sample of the final counters at the end of the
/// run (`wall_s`): the last periodic sample is taken up to one period before the end, and a
/// chart of the series must reach the totals.
fn merge_links(reports: &[RankReport], wall_s: f64) -> Vec<Link> {
    let mut names: Vec<&str> = Vec::new();
    for r in reports {
        for l in &r.links {
            if !names.contains(&l.name.as_str()) {
                names.push(&l.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let side = |rx: bool| {
                reports
                    .iter()
                    .flat_map(|r| &r.links)
                    .find(|l| l.name == name && l.rx == rx)
            };
            let (tx, rx) = (side(false), side(true));
            let count = match (tx, rx) {
                (Some(t), Some(r)) => t.samples.len().min(r.samples.len()),
                (Some(t), None) => t.samples.len(),
                (None, Some(r)) => r.samples.len(),
                (None, None) => 0,
            };
            let at = |l: Option<&LinkSample>, i: usize| {
                l.and_then(|l| l.samples.get(i))
                    .map(|s| s.1)
                    .unwrap_or_default()
            };
            let sample = |t_s: f64, t: Counts, r: Counts| Sample {
                t_s,
                tx_beats: t.tx,
                rx_beats: r.rx,
                xoff: r.xoff,
                xon: r.xon,
                max_in_flight: r.max_in_flight,
            };
            let mut samples: Vec<Sample> = (0..count)
                .map(|i| {
                    let t_s = rx
                        .or(tx)
                        .and_then(|l| l.samples.get(i))
                        .map_or(0.0, |s| s.0);
                    sample(t_s, at(tx, i), at(rx, i))
                })
                .collect();
            let (t, r) = (
                tx.map(|l| l.last).unwrap_or_default(),
                rx.map(|l| l.last).unwrap_or_default(),
            );
            let end = samples.last().map_or(wall_s, |s| s.t_s.max(wall_s));
            samples.push(sample(end, t, r));
            Link {
                name: name.to_string(),
                samples,
                final_counters: Final {
                    tx_beats: t.tx,
                    rx_beats: r.rx,
                    xoff: r.xoff,
                    xon: r.xon,
                    max_in_flight: r.max_in_flight,
                    overflow: r.overflow,
                },
            }
        })
        .collect()
}

impl Run {
    pub fn new(
        deployment: &str,
        images: usize,
        reports: &[RankReport],
        frames: Vec<Frame>,
        wall_s: f64,
        output_shape: Vec<usize>,
    ) -> Run {
        Run {
            deployment: deployment.to_string(),
            command: "infer".into(),
            images,
            devices: reports
                .iter()
                .map(|r| Device {
                    name: r.device.clone(),
                    clock_mhz: r.clock_mhz,
                })
                .collect(),
            links: merge_links(reports, wall_s),
            frames,
            wall_s,
            accuracy: None,
            training: None,
            whole: None,
            output_shape,
            labels: None,
        }
    }

    /// The true class of every frame (--labels `path`), and the accuracy of both models.
    pub fn set_labels(&mut self, path: &Path, labels: &[i64]) {
        let pairs = self
            .frames
            .iter()
            .map(|f| (f.top5.as_slice(), f.reference_top5.as_slice()));
        self.accuracy = Some(crate::labels::accuracy(path, pairs, labels));
        self.labels = Some(labels.to_vec());
    }

    pub fn failures(&self) -> Vec<String> {
        let mut v = Vec::new();
        let bad = self.frames.iter().filter(|f| !f.agrees()).count();
        if bad > 0 {
            v.push(format!(
                "{bad} of {} images disagree with the unpartitioned reference",
                self.frames.len()
            ));
        }
        for l in &self.links {
            if l.final_counters.overflow > 0 {
                v.push(format!(
                    "link {}: {} words lost at a full RX FIFO (overflow must be 0)",
                    l.name, l.final_counters.overflow
                ));
            }
        }
        v
    }
}

fn list(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The text `infer` prints at the end: per image, in total, per link, and the files.
/// One function on purpose: modelled figures and the run report join it here.
pub fn summary(run: &Run, outputs_path: &Path, run_json: &Path) -> String {
    let mut s = String::new();
    for (i, f) in run.frames.iter().enumerate() {
        let label = match run.labels.as_ref().and_then(|l| l.get(i)) {
            Some(l) => format!(" label {l}"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "image {:>4}:{label} top-1 {} (reference {}) top-5 {} (reference {}) {}",
            f.index,
            f.top1,
            f.reference_top1,
            list(&f.top5),
            list(&f.reference_top5),
            if f.bit_exact {
                "bit-exact"
            } else {
                "OUTPUT DIFFERS"
            }
        );
    }
    let n = run.frames.len();
    let top1 = run
        .frames
        .iter()
        .filter(|f| f.top1 == f.reference_top1)
        .count();
    let top5 = run
        .frames
        .iter()
        .filter(|f| f.top5 == f.reference_top5)
        .count();
    let exact = run.frames.iter().filter(|f| f.bit_exact).count();
    let _ = writeln!(
        s,
        "infer {}: {n} images through {} devices in {:.2} s: top-1 agreement {top1}/{n}, top-5 agreement {top5}/{n}, bit-exact {exact}/{n} with the unpartitioned reference",
        run.deployment,
        run.devices.len(),
        run.wall_s
    );
    if let Some(a) = &run.accuracy {
        s.push_str(&crate::labels::text(a));
    }
    s.push_str(&crate::weights::line(run.training.as_deref()));
    for l in &run.links {
        let f = &l.final_counters;
        let _ = writeln!(
            s,
            "link {}: TX {} beats, RX {} beats, XOFF {}, XON {}, max in flight {}, overflow {}",
            l.name, f.tx_beats, f.rx_beats, f.xoff, f.xon, f.max_in_flight, f.overflow
        );
    }
    let _ = writeln!(s, "outputs: {}", outputs_path.display());
    let _ = writeln!(s, "run: {}", run_json.display());
    s
}

/// The deployment's files the run report reads: the plan, the topology and (optional) the
/// partitioner's budgets; the executor export is `--reference`.
pub struct ReportInputs {
    pub plan: PathBuf,
    pub topology: PathBuf,
    pub devices: Option<PathBuf>,
}

impl ReportInputs {
    pub fn given(
        plan: Option<&Path>,
        topology: Option<&Path>,
        devices: Option<&Path>,
    ) -> Option<ReportInputs> {
        Some(ReportInputs {
            plan: plan?.to_path_buf(),
            topology: topology?.to_path_buf(),
            devices: devices.map(Path::to_path_buf),
        })
    }
}

/// How `infer` ended when every rank got to the end: fine, or a failure rank 0 reports.
pub enum Outcome {
    Done,
    Failed(String),
}

/// Writes outputs.npy and run.json, then (given the deployment's plan, topology and executor
/// export) the run report beside them, and prints the summary with the modelled and
/// simulated figures (of a replica deployment's whole too, which run.json records).
pub fn finish(
    mut run: Run,
    outputs: &[i64],
    out: &Path,
    report: Option<(&ReportInputs, &Path)>,
) -> Result<Outcome> {
    std::fs::create_dir_all(out).with_context(|| format!("--out {}", out.display()))?;
    let prepared = report.map(|(r, exec)| {
        run_report::deployment_figures(&r.plan, exec, &r.topology, run.images as u64)
    });
    if let Some(Ok((_, fig))) = &prepared {
        run.whole = fig.whole.clone();
    }
    let run = &run;
    let outputs_path = out.join("outputs.npy");
    let run_json = out.join("run.json");
    let mut shape = run.output_shape.clone();
    if shape.is_empty() {
        shape.push(run.images);
    } else {
        shape[0] *= run.images;
    }
    npy::write_i64(&outputs_path, &shape, outputs)?;
    npy::write_atomic(&run_json, serde_json::to_string_pretty(run)?.as_bytes())?;
    print!("{}", summary(run, &outputs_path, &run_json));
    match (report, prepared) {
        (Some((r, _)), Some(prepared)) => {
            let (dep, figures) = prepared.context("writing the run report")?;
            let html = run_report::report_beside_run(
                &run_json,
                &r.topology,
                r.devices.as_deref(),
                &dep,
                &figures,
            )
            .context("writing the run report")?;
            print!("{}", figures.summary());
            println!("run report: {}", html.display());
        }
        _ => println!(
            "no run report: it needs --plan, --topology and --reference (the deployment's run.sh passes them)"
        ),
    }
    let failures = run.failures();
    Ok(if failures.is_empty() {
        Outcome::Done
    } else {
        Outcome::Failed(format!("infer: {}", failures.join("; ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_rank_like_topk_ties_to_the_lower_index() {
        assert_eq!(
            top5(&[3, 9, 9, 1, 0, 7], Labels::Scores),
            vec![1, 2, 5, 0, 3]
        );
        assert_eq!(top5(&[4, 2, 7], Labels::Indices), vec![4, 2, 7]);
    }

    #[test]
    fn run_json_has_the_agreed_fields_with_integer_counters() {
        let r = RankReport {
            device: "fpga1".into(),
            clock_mhz: 250.0,
            links: vec![LinkSample {
                name: "fpga0:1->fpga1:0".into(),
                rx: true,
                samples: vec![(
                    0.5,
                    Counts {
                        rx: 3,
                        ..Counts::default()
                    },
                )],
                last: Counts {
                    rx: 4,
                    ..Counts::default()
                },
            }],
        };
        let f = frame(0, &[1, 2, 3], &[1, 2, 3], Labels::Indices);
        let run = Run::new("d", 1, &[r], vec![f], 1.5, vec![1, 3]);
        let v: serde_json::Value = serde_json::to_value(&run).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "command",
                "deployment",
                "devices",
                "frames",
                "images",
                "links",
                "wall_s"
            ]
        );
        assert_eq!(v["links"][0]["final"]["rx_beats"], serde_json::json!(4));
        assert!(v["links"][0]["final"]["overflow"].is_u64());
        assert!(v["links"][0]["samples"][0]["t_s"].is_f64());
        // the periodic sample, then the final counters at the end of the run
        let samples = v["links"][0]["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0]["rx_beats"], serde_json::json!(3));
        assert_eq!(samples[1]["rx_beats"], serde_json::json!(4));
        assert_eq!(samples[1]["t_s"], serde_json::json!(1.5));
        assert_eq!(v["frames"][0]["top5"], serde_json::json!([1, 2, 3]));
        assert_eq!(v["frames"][0]["bit_exact"], serde_json::json!(true));
    }
}
