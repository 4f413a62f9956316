//! `action build-model [--runtime DIR | --runtime-only] OUT_DIR VERILATOR -- VERILATOR_ARGS...`
//! (was rules/tools/verilator/build_model.sh): runs VERILATOR (the command
//! VerilatorToolchainInfo.verilator names) with `--Mdir OUT_DIR` (created here: buck2 only
//! creates the parent of a declared output directory), removes the files Verilator writes
//! with timestamps, and keeps make from logging its absolute directory, so the output depends
//! on the inputs only.
//!
//! Verilator compiles its runtime library (verilated.cpp, verilated_timing.cpp,
//! verilated_threads.cpp: about 3.5 s of CPU) into every model it builds. The toolchain
//! compiles it once (`--runtime-only`: OUT_DIR keeps the runtime objects and runtime.sig, the
//! model settings they were compiled for), and each model built with `--runtime DIR` links
//! those objects instead: make is told to take them as built (its --assume-old, passed by
//! Verilator's own -MAKEFLAGS). A model whose generated makefiles ask for other settings
//! (tracing, coverage, other runtime files or C++ flags) is built again without them, so a
//! shared object never stands in for one compiled differently.

use crate::util::{fail, run_logged, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// link the runtime objects of DIR (built by --runtime-only) instead of compiling them
    #[arg(long, value_name = "DIR", conflicts_with = "runtime_only")]
    runtime: Option<PathBuf>,
    /// keep only the runtime objects and their signature (the toolchain's shared runtime)
    #[arg(long)]
    runtime_only: bool,
    /// the model's directory (Verilator's --Mdir)
    out_dir: PathBuf,
    /// the Verilator command
    verilator: String,
    /// Verilator's arguments, after `--`
    #[arg(last = true, required = true, value_name = "VERILATOR_ARGS")]
    args: Vec<String>,
}

/// The settings the runtime objects of a model are compiled with, read from the makefiles
/// Verilator generated (`*.mk`): the scalar VM_ settings and VERILATOR_ROOT, the runtime files
/// and the user's C++ flags and libraries; not the model's own names and files, nor
/// VM_PARALLEL_BUILDS, which Verilator sets for large models and which only decides how the
/// model's own files are compiled (verilated.mk compiles the runtime alike either way).
/// Sorted lines, so the order of the makefiles does not matter.
pub fn signature_of(makefiles: &[String]) -> Vec<String> {
    let scalar = |l: &str| {
        let Some((name, value)) = l.split_once(" = ") else {
            return false;
        };
        let named = name == "VERILATOR_ROOT"
            || name.strip_prefix("VM_").is_some_and(|n| {
                !n.is_empty()
                    && n.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            });
        named && !value.contains('\\')
    };
    // `NAME = \` or `NAME += \`: a list continued on tab-indented lines
    let list = |l: &str| {
        [
            "VM_GLOBAL_FAST",
            "VM_GLOBAL_SLOW",
            "VM_USER_CFLAGS",
            "VM_USER_LDLIBS",
        ]
        .into_iter()
        .find(|n| {
            l.strip_prefix(n)
                .is_some_and(|rest| rest == " = \\" || rest == " += \\")
        })
    };
    let mut lines = vec![];
    for text in makefiles {
        let mut block: Option<&str> = None;
        for l in text.lines() {
            if ["VM_PREFIX =", "VM_MODPREFIX =", "VM_PARALLEL_BUILDS ="]
                .iter()
                .any(|p| l.starts_with(p))
            {
                block = None;
            } else if scalar(l) {
                block = None;
                lines.push(l.to_string());
            } else if let Some(name) = list(l) {
                block = Some(name);
            } else if let (Some(name), true) = (block, l.starts_with('\t')) {
                let first = l.split_whitespace().next().unwrap_or("");
                lines.push(format!("{name} {first}"));
            } else {
                block = None;
            }
        }
    }
    lines.sort();
    lines
}

/// The signature of the model in `dir`, one setting a line.
fn signature(dir: &Path) -> String {
    let mut makefiles: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    makefiles.retain(|p| p.extension().is_some_and(|e| e == "mk"));
    makefiles.sort();
    let texts: Vec<String> = makefiles
        .iter()
        .filter_map(|p| fs::read_to_string(p).ok())
        .collect();
    signature_of(&texts).into_iter().map(|l| l + "\n").collect()
}

fn names_in(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.sort();
    names
}

fn io_fail<T>(what: &str, path: &Path, e: std::io::Error) -> Result<T> {
    fail(
        3,
        format!("build_model: cannot {what} {}: {e}", path.display()),
    )
}

/// One Verilator run into a fresh `out`, linking the objects of `runtime` when given.
fn build(a: &Args, runtime: Option<&Path>) -> Result {
    let out = &a.out_dir;
    if out.exists() {
        fs::remove_dir_all(out).or_else(|e| io_fail("remove", out, e))?;
    }
    fs::create_dir_all(out).or_else(|e| io_fail("create", out, e))?;
    let mut make_args: Vec<String> = vec![];
    if let Some(runtime) = runtime {
        for obj in names_in(runtime) {
            if obj.extension().is_none_or(|e| e != "o") {
                continue;
            }
            let name = obj.file_name().unwrap();
            fs::copy(&obj, out.join(name)).or_else(|e| io_fail("copy", &obj, e))?;
            make_args.push("-MAKEFLAGS".into());
            make_args.push(format!("--assume-old={}", name.to_string_lossy()));
        }
    }
    // Verilator's --build runs `make -C OUT_DIR`, which logs the absolute directory it
    // enters: the log would name the checkout.
    let makeflags = match std::env::var("MAKEFLAGS") {
        Ok(m) if !m.is_empty() => format!("--no-print-directory {m}"),
        _ => "--no-print-directory".to_string(),
    };
    let log = out.join("build.log");
    let status = run_logged(
        Command::new(&a.verilator)
            .args(&a.args)
            .arg("--Mdir")
            .arg(out)
            .args(&make_args)
            .env("MAKEFLAGS", makeflags),
        &log,
        false,
    );
    if !status.map(|s| s.success()).unwrap_or(false) {
        eprint!(
            "{}",
            String::from_utf8_lossy(&fs::read(&log).unwrap_or_default())
        );
        return fail(
            3,
            format!(
                "error: {} failed building the model (log above)",
                a.verilator
            ),
        );
    }
    Ok(())
}

pub fn run(a: Args) -> Result {
    let out = a.out_dir.clone();
    build(&a, a.runtime.as_deref())?;
    if let Some(runtime) = &a.runtime {
        let shared = fs::read_to_string(runtime.join("runtime.sig")).unwrap_or_default();
        if signature(&out).trim_end_matches('\n') != shared.trim_end_matches('\n') {
            eprintln!("build_model: this model's runtime settings differ from the shared runtime's; building its own");
            build(&a, None)?;
        }
    }
    if a.runtime_only {
        let sig = out.join("runtime.sig.tmp");
        fs::write(&sig, signature(&out)).or_else(|e| io_fail("write", &sig, e))?;
        for path in names_in(&out) {
            let name = path.file_name().unwrap().to_string_lossy();
            let keep = name == "runtime.sig.tmp"
                || (name.starts_with("verilated") && name.ends_with(".o"));
            if keep {
                continue;
            }
            let removed = if path.is_dir() && !path.is_symlink() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            removed.or_else(|e| io_fail("remove", &path, e))?;
        }
        let final_sig = out.join("runtime.sig");
        return fs::rename(&sig, &final_sig).or_else(|e| io_fail("write", &final_sig, e));
    }
    // Verilator's timestamp files, make's dependency files and the objects (the binary is
    // what the model is for) would make the output differ from one build to the next.
    for path in names_in(&out) {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with("__verFiles.dat") || name.ends_with(".d") || name.ends_with(".o") {
            fs::remove_file(&path).or_else(|e| io_fail("remove", &path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_keeps_runtime_settings_only() {
        let mk = "VM_PREFIX = Vtb\nVM_MODPREFIX = Vtb\nVM_SC = 0\nVM_TRACE = 1\n\
                  VERILATOR_ROOT = /usr/share/verilator\nVM_PARALLEL_BUILDS = 1\n\
                  VM_GLOBAL_FAST += \\\n\tverilated \\\n\tverilated_timing \\\n\n\
                  VM_CLASSES_FAST += \\\n\tVtb \\\n\n\
                  VM_USER_CFLAGS = \\\n\t-DX \\\n\n\
                  VM_SRC = a \\\n\tb\n";
        assert_eq!(
            signature_of(&[mk.to_string()]),
            vec![
                "VERILATOR_ROOT = /usr/share/verilator",
                "VM_GLOBAL_FAST verilated",
                "VM_GLOBAL_FAST verilated_timing",
                "VM_SC = 0",
                "VM_TRACE = 1",
                "VM_USER_CFLAGS -DX",
            ]
        );
    }
}
