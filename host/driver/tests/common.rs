//! Sim xclbins of small deployments (host/api's fixtures) and a launcher of `mpirun` with one rank per device.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// The xclbin fixtures are shared with host/api's tests: one copy.
#[path = "../../api/tests/fixtures/mod.rs"]
mod fixtures;
#[allow(unused_imports)] // not every test binary uses every fixture
pub use fixtures::*;

/// `aurora-host` started outside MPI: it launches itself under mpirun, one rank per xclbin.
pub fn mpirun(xclbins: &[PathBuf], args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_aurora-host"));
    for x in xclbins {
        c.arg("--xclbin").arg(x);
    }
    c.args(args).current_dir(cwd);
    c
}

#[allow(dead_code)] // not every test binary uses every fixture
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// PIDs of `aurora-host` processes that are MPI rank `rank`.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn rank_pids(rank: u32) -> Vec<i32> {
    let exe = env!("CARGO_BIN_EXE_aurora-host");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmd).starts_with(exe) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if env
            .split(|b| *b == 0)
            .any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}").as_bytes())
        {
            out.push(pid);
        }
    }
    out
}
