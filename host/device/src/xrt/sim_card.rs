//! A simulated card behind XRT's calls: `XrtDevice<SimCard>` runs the XRT backend's own
//! logic (memory groups, argument binding by XRT's metadata, run states) on a machine
//! without a card. Each call does to the simulated device what XRT does to a card: a
//! buffer object in the memory group's bank (MEM_TOPOLOGY as our reader sees it), a run
//! whose arguments arrive by index and reach the simulated kernel by the name the
//! device description gives that index.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{XrtApi, XrtArg, ERT_CMD_STATE_COMPLETED, ERT_CMD_STATE_RUNNING};
use crate::sim::SimDevice;
use crate::{BufferId, Device, KernelArg, RunId};

pub struct SimCard {
    sim: SimDevice,
    /// MEM_TOPOLOGY tags by group index.
    banks: Vec<String>,
}

impl SimCard {
    /// `sim` has its xclbin loaded (and its links joined); `load_xclbin` checks it is the
    /// one XRT is asked to load.
    pub fn new(sim: SimDevice) -> SimCard {
        SimCard { sim, banks: vec![] }
    }

    pub fn sim(&self) -> &SimDevice {
        &self.sim
    }
}

impl XrtApi for SimCard {
    fn label(&self) -> String {
        format!("{} (simulated card behind XRT's calls)", self.sim.name())
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let x = xclbin::Xclbin::from_bytes(&path.display().to_string(), &bytes)?;
        if x.uuid != self.sim.uuid()? {
            bail!(
                "{}: {} is not the xclbin the simulated card holds",
                self.label(),
                path.display()
            );
        }
        self.banks = x
            .section(xclbin::SectionKind::MemTopology)
            .map(|s| xclbin::sections::parse_mem_topology(&s.data))
            .transpose()?
            .unwrap_or_default()
            .into_iter()
            .map(|(tag, _)| tag)
            .collect();
        Ok(x.uuid)
    }

    fn bo_alloc(&mut self, size: usize, group: u32) -> Result<u64> {
        let bank = self
            .banks
            .get(group as usize)
            .with_context(|| format!("xrtBOAlloc: no memory group {group} in MEM_TOPOLOGY"))?
            .clone();
        Ok(self.sim.alloc(&bank, size)?.0)
    }

    fn bo_write(&mut self, bo: u64, data: &[u8], seek: usize) -> Result<()> {
        self.sim.write_buffer(BufferId(bo), seek, data)
    }

    fn bo_read(&mut self, bo: u64, out: &mut [u8], skip: usize) -> Result<()> {
        self.sim.read_buffer(BufferId(bo), skip, out)
    }

    fn read_register(&self, _kernel: &str, cu: &str, offset: u32) -> Result<u32> {
        self.sim.read_register(cu, offset)
    }

    fn write_register(&self, _kernel: &str, cu: &str, offset: u32, value: u32) -> Result<()> {
        self.sim.write_register(cu, offset, value)
    }

    fn run_start(&mut self, kernel: &str, cu: &str, args: &[(u32, XrtArg)]) -> Result<u64> {
        let k = self
            .sim
            .description()?
            .kernel(cu)
            .with_context(|| format!("xrtPLKernelOpen: no CU {kernel}:{{{cu}}}"))?
            .clone();
        let signature = k.args();
        let mut named = Vec::new();
        for (index, a) in args {
            let arg = signature
                .iter()
                .find(|s| s.index == *index)
                .with_context(|| format!("xrtRunSetArg: CU {cu} has no argument {index}"))?;
            named.push((
                arg.name.clone(),
                match a {
                    XrtArg::Scalar { value, .. } => KernelArg::Scalar(*value),
                    XrtArg::Buffer(bo) => KernelArg::Buffer(BufferId(*bo)),
                },
            ));
        }
        Ok(self.sim.start(cu, &named)?.0)
    }

    fn run_state(&mut self, run: u64) -> Result<i32> {
        Ok(if self.sim.is_done(RunId(run))? {
            ERT_CMD_STATE_COMPLETED
        } else {
            ERT_CMD_STATE_RUNNING
        })
    }

    fn run_wait(&mut self, run: u64, timeout: Duration) -> Result<i32> {
        self.sim.wait(RunId(run), timeout)?;
        Ok(ERT_CMD_STATE_COMPLETED)
    }

    fn run_close(&mut self, _run: u64) {}

    // A card runs its free-running CUs from the xclbin's load; the simulation starts them
    // where the host driver says they take part.
    fn free_running(&mut self, cu: &str) -> Result<()> {
        self.sim.begin_free_running(cu)
    }

    fn free_running_error(&mut self) -> Result<()> {
        self.sim.check_free_running()
    }

    fn free_running_end(&mut self, timeout: Duration) -> Result<()> {
        self.sim.end_free_running(timeout)
    }
}
