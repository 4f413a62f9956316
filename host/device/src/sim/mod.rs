//! Simulated devices: the sim xclbin containers of the build graph, read back and run.
//!
//! - AuroraFlow CUs: emulated links with the kernel's flow control (`link`, `aurora_cu`);
//! - HLS CUs: their C-simulation libraries through af_sim_abi.h (`hls`), one thread per run;
//! - FINN CUs: a `FinnPartition` plugged in by the caller (`finn`);
//! - streams between CUs: bounded FIFOs of the depth the link configuration gives.
//!
//! `SimDevice` is split by concern: loading an xclbin into CUs and streams (`load`), the
//! runs of HLS CUs (`hls_runs`), of FINN CUs (`finn_runs`), the AuroraFlow CUs' link pumps
//! (`link_pumps`) and the `Device` interface over all of them (`device`).

pub mod aurora_cu;
pub mod finn;
pub mod hls;
pub mod link;
pub mod stream;

mod device;
mod finn_runs;
mod hls_runs;
mod link_pumps;
mod load;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use xclbin::read::SimXclbin;
use xclbin::DeviceDescription;

use crate::{BufferId, RunId};
use aurora_cu::AuroraCu;
use finn::FinnFactory;
use hls::HlsLibrary;
use stream::StreamFifo;

pub struct SimOptions {
    /// Executor of FINN partitions (crate finn_exec); without it FINN CUs cannot start.
    pub finn: Option<Arc<dyn FinnFactory>>,
    /// Longest any stream or link wait may last without progress.
    pub stall_timeout: Duration,
    /// Overrides the channel delay of every link (link cycles); default from `cable_m`.
    pub channel_cycles: Option<u64>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            finn: None,
            stall_timeout: Duration::from_secs(10),
            channel_cycles: None,
        }
    }
}

enum SimCu {
    Aurora(Arc<AuroraCu>),
    Hls {
        lib: Arc<HlsLibrary>,
        regs: Mutex<BTreeMap<u32, u32>>,
    },
    Finn {
        dir: PathBuf,
    },
}

/// A buffer: its bank and bytes.
type Buffer = (String, Arc<Mutex<Vec<u8>>>);

struct Run {
    cu: String,
    thread: Option<JoinHandle<Result<()>>>,
}

pub struct SimDevice {
    label: String,
    options: SimOptions,
    loaded: Option<SimXclbin>,
    workdir: Option<tempfile::TempDir>,
    cus: BTreeMap<String, SimCu>,
    streams: BTreeMap<String, Arc<StreamFifo>>,
    buffers: BTreeMap<BufferId, Buffer>,
    runs: BTreeMap<RunId, Run>,
    /// Runs of the free-running CUs begun for the current run.
    free: Vec<RunId>,
    /// Set by `end_free_running`: link pumps waiting for their producer's next run end.
    stop_free: Arc<AtomicBool>,
    next: u64,
}

impl SimDevice {
    pub fn new(label: impl Into<String>, options: SimOptions) -> SimDevice {
        SimDevice {
            label: label.into(),
            options,
            loaded: None,
            workdir: None,
            cus: BTreeMap::new(),
            streams: BTreeMap::new(),
            buffers: BTreeMap::new(),
            runs: BTreeMap::new(),
            free: Vec::new(),
            stop_free: Arc::new(AtomicBool::new(false)),
            next: 1,
        }
    }

    pub fn description(&self) -> Result<&DeviceDescription> {
        Ok(&self
            .loaded
            .as_ref()
            .context("no xclbin loaded")?
            .description)
    }

    /// The loaded xclbin's UUID.
    pub fn uuid(&self) -> Result<[u8; 16]> {
        Ok(self
            .loaded
            .as_ref()
            .context("no xclbin loaded")?
            .xclbin
            .uuid)
    }

    pub fn aurora(&self, cu: &str) -> Result<Arc<AuroraCu>> {
        match self.cus.get(cu) {
            Some(SimCu::Aurora(a)) => Ok(a.clone()),
            Some(_) => bail!("{}: CU {cu} is not an AuroraFlow kernel", self.label),
            None => bail!("{}: no CU {cu}", self.label),
        }
    }

    /// AuroraFlow CUs by QSFP port.
    pub fn aurora_ports(&self) -> BTreeMap<u32, Arc<AuroraCu>> {
        self.cus
            .values()
            .filter_map(|c| match c {
                SimCu::Aurora(a) => Some((a.port, a.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn stream(&self, endpoint: &str) -> Option<Arc<StreamFifo>> {
        self.streams.get(endpoint).cloned()
    }

    /// Keeps a run's thread under a new id, for `is_done` and `wait`.
    fn add_run(&mut self, cu: &str, thread: JoinHandle<Result<()>>) -> RunId {
        let id = RunId(self.next);
        self.next += 1;
        self.runs.insert(
            id,
            Run {
                cu: cu.to_string(),
                thread: Some(thread),
            },
        );
        id
    }
}
