//! Sim xclbins of small deployments (host/api's fixtures) and a launcher of `mpirun` with one rank per device.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// The xclbin fixtures are shared with host/api's tests: one copy.
#[path = "../../api/tests/fixtures/mod.rs"]
mod fixtures;
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

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// PIDs of `aurora-host` processes that are MPI rank `rank` of the run started in `cwd`
/// (mpirun starts its ranks in its own working directory, each test's run in a directory of
/// its own): the tests of every file run at once in one executable, so another test's ranks
/// may be running beside this one's.
pub fn rank_pids(rank: u32, cwd: &Path) -> Vec<i32> {
    let exe = env!("CARGO_BIN_EXE_aurora-host");
    let cwd = std::fs::canonicalize(cwd).unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmd).starts_with(exe)
            || std::fs::read_link(e.path().join("cwd")).ok().as_ref() != Some(&cwd)
        {
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
