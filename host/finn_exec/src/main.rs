//! `finn-exec`: run exported FINN models, check them against FINN's reference outputs,
//! or measure their speed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use finn_exec::{check, frames, npy, Partition, Pipeline, Port, Tensor};

#[derive(Parser)]
#[command(
    name = "finn-exec",
    about = "Functional executor of FINN HW-layer graphs",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
struct RunArgs {
    /// A partition directory (graph.json) or an exported network (exec.json: all
    /// partitions in order).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Input frames: .npy (shape of the model input, or [N, ...] for N frames) or raw
    /// little-endian values (see --raw-type).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Output: .npy (int64, [N, ...]) or raw little-endian int64.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Element type of a raw --input.
    #[arg(long, value_enum, default_value = "u8")]
    raw_type: RawType,
}

#[derive(Clone, Copy, ValueEnum)]
enum RawType {
    U8,
    I8,
    I32,
    I64,
    F32,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compare against FINN's Python execution (finn/flow/exec_reference.py output).
    Check {
        /// The exported network (exec.json).
        #[arg(long)]
        exec: PathBuf,
        /// The reference directory (reference.json).
        #[arg(long)]
        reference: PathBuf,
    },
    /// Frames per second on random inputs (one thread).
    Bench {
        #[arg(long)]
        model: PathBuf,
        #[arg(long, default_value_t = 10)]
        frames: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Either one partition or a chain of them, behind one interface.
enum Model {
    One(Partition),
    Chain(Pipeline),
}

impl Model {
    fn load(dir: &Path) -> Result<Model> {
        if dir.join("exec.json").is_file() {
            Ok(Model::Chain(Pipeline::load(dir)?))
        } else if dir.join("graph.json").is_file() {
            Ok(Model::One(Partition::load(dir)?))
        } else {
            bail!(
                "{}: neither graph.json nor exec.json found (export with finn/flow/export_exec.py)",
                dir.display()
            )
        }
    }

    fn inputs(&self) -> &[Port] {
        match self {
            Model::One(p) => p.inputs(),
            Model::Chain(c) => c.inputs(),
        }
    }

    fn outputs(&self) -> &[Port] {
        match self {
            Model::One(p) => p.outputs(),
            Model::Chain(c) => c.outputs(),
        }
    }

    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        match self {
            Model::One(p) => p.run(inputs),
            Model::Chain(c) => c.run(inputs),
        }
    }
}

fn read_input(path: &Path, port: &Port, raw: RawType) -> Result<Vec<Tensor>> {
    let is_npy = path.extension().is_some_and(|e| e == "npy");
    let (shape, data) = if is_npy {
        let a = npy::read(path)?;
        let d = a.integers(&path.display().to_string())?;
        (a.shape, d)
    } else {
        let bytes = fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let width = match raw {
            RawType::U8 | RawType::I8 => 1,
            RawType::I32 | RawType::F32 => 4,
            RawType::I64 => 8,
        };
        if bytes.len() % width != 0 {
            bail!(
                "{}: {} bytes is not a whole number of {width}-byte values",
                path.display(),
                bytes.len()
            );
        }
        let vals: Vec<f64> = bytes
            .chunks_exact(width)
            .map(|c| match raw {
                RawType::U8 => c[0] as f64,
                RawType::I8 => c[0] as i8 as f64,
                RawType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
                RawType::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
                RawType::I64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            })
            .collect();
        let a = npy::Array {
            descr: "raw".into(),
            shape: vec![vals.len()],
            values: vals,
        };
        (a.shape.clone(), a.integers(&path.display().to_string())?)
    };
    frames::split(port, &shape, data).with_context(|| format!("{}", path.display()))
}

fn run(args: RunArgs) -> Result<()> {
    let (Some(model), Some(input), Some(output)) = (args.model, args.input, args.output) else {
        bail!("give --model DIR --input FILE --output FILE (or a subcommand: check, bench; see --help)");
    };
    let m = Model::load(&model)?;
    if m.inputs().len() != 1 || m.outputs().len() != 1 {
        bail!(
            "{}: the CLI runs single-input single-output models",
            model.display()
        );
    }
    let frames_in = read_input(&input, &m.inputs()[0], args.raw_type)?;
    let mut out = Vec::new();
    for (i, f) in frames_in.iter().enumerate() {
        let o = m
            .run(std::slice::from_ref(f))
            .with_context(|| format!("frame {i}"))?;
        out.extend(o[0].data.iter().map(|&v| v as i64));
    }
    let shape = frames::batch_shape(&m.outputs()[0], frames_in.len());
    if output.extension().is_some_and(|e| e == "npy") {
        npy::write_i64(&output, &shape, &out)
    } else {
        let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
        npy::write_atomic(&output, &bytes)
    }
}

fn run_check(exec: &Path, reference: &Path) -> Result<bool> {
    let results = check::check(exec, reference)?;
    let mut ok = true;
    for r in &results {
        if r.mismatches.is_empty() {
            println!(
                "ok   {}: {} frames, {} values bit-exact with FINN",
                r.name, r.frames, r.values
            );
        } else {
            ok = false;
            println!(
                "FAIL {}: {} of {} frame-tensors differ from FINN",
                r.name,
                r.mismatches.len(),
                r.frames
            );
            for m in r.mismatches.iter().take(5) {
                println!("     {m}");
            }
        }
    }
    if results.is_empty() {
        bail!("{}: no cases", reference.display());
    }
    Ok(ok)
}

fn bench(model: &Path, n: usize, seed: u64) -> Result<()> {
    let m = Model::load(model)?;
    let mut rng = frames::Rng::new(seed);
    let inputs: Vec<Vec<Tensor>> = (0..n.max(1))
        .map(|_| m.inputs().iter().map(|p| rng.tensor(p)).collect())
        .collect();
    m.run(&inputs[0])?; // warm-up: page in weights
    let t0 = Instant::now();
    for f in &inputs {
        std::hint::black_box(m.run(f)?);
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({"model": model.display().to_string(), "frames": inputs.len(), "seconds": s,
                           "frames_per_s": inputs.len() as f64 / s, "threads": 1})
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Some(Cmd::Check { exec, reference }) => run_check(&exec, &reference),
        Some(Cmd::Bench {
            model,
            frames,
            seed,
        }) => bench(&model, frames, seed).map(|_| true),
        None => run(cli.run).map(|_| true),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: finn-exec: {e:#}");
            ExitCode::from(2)
        }
    }
}
