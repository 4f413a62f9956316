//! A device that logs every buffer and kernel call the host driver makes on the device it
//! wraps, one line per call: the sequence two backends must agree on for the same command.
//!
//! Buffer and run ids are the order of allocation and start (the backends number them
//! differently), buffer contents are logged by length and FNV-1a digest. Register reads
//! and completion polls are not logged: how often a sampler or a wait loop comes round
//! depends on timing, not on the command.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use xclbin::DeviceDescription;

use crate::{BufferId, CuInfo, Device, KernelArg, RunId};

/// The calls logged so far, shared with whoever writes them out.
pub type CallLog = Arc<Mutex<Vec<String>>>;

pub struct Recording {
    inner: Box<dyn Device>,
    log: CallLog,
    buffers: BTreeMap<BufferId, usize>,
    runs: BTreeMap<RunId, usize>,
}

fn digest(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    })
}

impl Recording {
    pub fn new(inner: Box<dyn Device>) -> (Recording, CallLog) {
        let log = CallLog::default();
        (
            Recording {
                inner,
                log: log.clone(),
                buffers: BTreeMap::new(),
                runs: BTreeMap::new(),
            },
            log,
        )
    }

    fn note(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }

    fn buffer(&self, b: BufferId) -> String {
        self.buffers
            .get(&b)
            .map_or("buffer?".to_string(), |i| format!("buffer#{i}"))
    }

    fn run(&self, r: RunId) -> String {
        self.runs
            .get(&r)
            .map_or("run?".to_string(), |i| format!("run#{i}"))
    }
}

impl Device for Recording {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
        let uuid = self.inner.load_xclbin(path)?;
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        self.note(format!("load_xclbin {name}"));
        Ok(uuid)
    }

    fn description(&self) -> Result<&DeviceDescription> {
        self.inner.description()
    }

    fn compute_units(&self) -> Result<Vec<CuInfo>> {
        self.inner.compute_units()
    }

    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId> {
        let b = self.inner.alloc(bank, size)?;
        let i = self.buffers.len();
        self.buffers.insert(b, i);
        self.note(format!("alloc buffer#{i} {size} B in {bank}"));
        Ok(b)
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()> {
        self.note(format!(
            "write {} at {offset}: {} B, digest {:016x}",
            self.buffer(buffer),
            data.len(),
            digest(data)
        ));
        self.inner.write_buffer(buffer, offset, data)
    }

    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()> {
        self.inner.read_buffer(buffer, offset, out)?;
        self.note(format!(
            "read {} at {offset}: {} B, digest {:016x}",
            self.buffer(buffer),
            out.len(),
            digest(out)
        ));
        Ok(())
    }

    fn read_register(&self, cu: &str, offset: u32) -> Result<u32> {
        self.inner.read_register(cu, offset)
    }

    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()> {
        self.note(format!("write_register {cu} {offset:#x} = {value:#x}"));
        self.inner.write_register(cu, offset, value)
    }

    fn start(&mut self, cu: &str, args: &[(String, KernelArg)]) -> Result<RunId> {
        let shown: Vec<String> = args
            .iter()
            .map(|(n, a)| match a {
                KernelArg::Scalar(v) => format!("{n}={v}"),
                KernelArg::Buffer(b) => format!("{n}={}", self.buffer(*b)),
                KernelArg::Stream => format!("{n}=stream"),
            })
            .collect();
        let r = self.inner.start(cu, args)?;
        let i = self.runs.len();
        self.runs.insert(r, i);
        self.note(format!("start run#{i} {cu}({})", shown.join(", ")));
        Ok(r)
    }

    fn begin_free_running(&mut self, cu: &str) -> Result<()> {
        self.note(format!("begin_free_running {cu}"));
        self.inner.begin_free_running(cu)
    }

    fn check_free_running(&mut self) -> Result<()> {
        self.inner.check_free_running()
    }

    fn end_free_running(&mut self, timeout: Duration) -> Result<()> {
        self.note("end_free_running".into());
        self.inner.end_free_running(timeout)
    }

    fn is_done(&mut self, run: RunId) -> Result<bool> {
        self.inner.is_done(run)
    }

    fn wait(&mut self, run: RunId, timeout: Duration) -> Result<()> {
        self.note(format!("wait {}", self.run(run)));
        self.inner.wait(run, timeout)
    }
}
