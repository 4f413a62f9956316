//! The `Device` interface over a simulated device: loading, buffers in the simulated banks,
//! the CUs' registers, host-started and free-running runs and waiting for them.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use xclbin::DeviceDescription;

use super::{SimCu, SimDevice};
use crate::{BufferId, CuInfo, Device, KernelArg, RunId};

impl Device for SimDevice {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn description(&self) -> Result<&DeviceDescription> {
        SimDevice::description(self)
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
        let sim = xclbin::read_xclbin(path)?;
        if sim.xclbin.platform_vbnv != sim.description.platform {
            bail!(
                "{}: header platform '{}' differs from its description's '{}'",
                path.display(),
                sim.xclbin.platform_vbnv,
                sim.description.platform
            );
        }
        let uuid = sim.xclbin.uuid;
        self.cus.clear();
        self.streams.clear();
        self.workdir = Some(tempfile::Builder::new().prefix("sim-device-").tempdir()?);
        self.loaded = Some(sim);
        self.build_cus()
            .with_context(|| format!("loading {} on {}", path.display(), self.label))?;
        Ok(uuid)
    }

    fn compute_units(&self) -> Result<Vec<CuInfo>> {
        let d = self.description()?;
        Ok(d.kernels
            .iter()
            .enumerate()
            .map(|(i, k)| CuInfo {
                name: k.cu.clone(),
                kernel: k.kernel.clone(),
                kind: k.kind.clone(),
                base_address: xclbin::sections::cu_base(i),
            })
            .collect())
    }

    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId> {
        let capacity = self.bank_bytes(bank)?;
        let used: usize = self
            .buffers
            .values()
            .filter(|(b, _)| b == bank)
            .map(|(_, v)| v.lock().unwrap().len())
            .sum();
        if used + size > capacity {
            bail!(
                "{}: {bank} has {} B free, {size} B requested",
                self.label,
                capacity - used
            );
        }
        let id = BufferId(self.next);
        self.next += 1;
        self.buffers
            .insert(id, (bank.to_string(), Arc::new(Mutex::new(vec![0; size]))));
        Ok(id)
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()> {
        let (_, b) = self.buffers.get(&buffer).context("unknown buffer")?;
        let mut b = b.lock().unwrap();
        if offset + data.len() > b.len() {
            bail!(
                "write of {} B at {offset} overruns a {} B buffer",
                data.len(),
                b.len()
            );
        }
        b[offset..offset + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()> {
        let (_, b) = self.buffers.get(&buffer).context("unknown buffer")?;
        let b = b.lock().unwrap();
        if offset + out.len() > b.len() {
            bail!(
                "read of {} B at {offset} overruns a {} B buffer",
                out.len(),
                b.len()
            );
        }
        out.copy_from_slice(&b[offset..offset + out.len()]);
        Ok(())
    }

    fn read_register(&self, cu: &str, offset: u32) -> Result<u32> {
        match self.cus.get(cu) {
            Some(SimCu::Aurora(a)) => a.read32(offset),
            Some(SimCu::Hls { regs, .. }) => {
                // ap_ctrl_hs: bit 2 ap_idle when no run of this CU is active.
                let running = self
                    .runs
                    .values()
                    .any(|r| r.cu == cu && r.thread.as_ref().is_some_and(|t| !t.is_finished()));
                if offset == 0 {
                    return Ok(if running { 0x1 } else { 0x4 });
                }
                Ok(*regs.lock().unwrap().get(&offset).unwrap_or(&0))
            }
            Some(SimCu::Finn { .. }) => Ok(0),
            None => bail!("{}: no CU {cu} in the loaded xclbin", self.label),
        }
    }

    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()> {
        match self.cus.get(cu) {
            Some(SimCu::Aurora(a)) => a.write32(offset, value),
            Some(SimCu::Hls { regs, .. }) => {
                regs.lock().unwrap().insert(offset, value);
                Ok(())
            }
            Some(SimCu::Finn { .. }) => Ok(()),
            None => bail!("{}: no CU {cu} in the loaded xclbin", self.label),
        }
    }

    fn start(&mut self, cu: &str, args: &[(String, KernelArg)]) -> Result<RunId> {
        if !matches!(self.cus.get(cu), Some(SimCu::Hls { .. })) {
            bail!(
                "{}: CU {cu} is not an HLS kernel with a start (ap_ctrl_hs)",
                self.label
            );
        }
        self.start_named(cu, args)
    }

    fn begin_free_running(&mut self, cu: &str) -> Result<()> {
        if self.free.is_empty() {
            self.stop_free.store(false, Ordering::SeqCst);
        }
        let ids = match self.cus.get(cu) {
            Some(SimCu::Aurora(a)) => {
                let a = a.clone();
                self.start_pumps_of(&a, true)
            }
            Some(SimCu::Finn { .. }) => vec![self.start_finn(cu)?],
            Some(SimCu::Hls { .. }) if self.restarts_per_packet(cu) => {
                vec![self.start_free_hls(cu)?]
            }
            Some(SimCu::Hls { .. }) => vec![self.start_named(cu, &[])?],
            None => bail!("{}: no CU {cu} in the loaded xclbin", self.label),
        };
        self.free.extend(ids);
        Ok(())
    }

    fn check_free_running(&mut self) -> Result<()> {
        let finished: Vec<RunId> = self
            .free
            .iter()
            .copied()
            .filter(|r| {
                self.runs
                    .get(r)
                    .and_then(|r| r.thread.as_ref())
                    .is_some_and(|t| t.is_finished())
            })
            .collect();
        for r in finished {
            self.free.retain(|f| *f != r);
            self.wait(r, Duration::ZERO)?;
        }
        Ok(())
    }

    fn end_free_running(&mut self, timeout: Duration) -> Result<()> {
        self.stop_free.store(true, Ordering::SeqCst);
        for r in std::mem::take(&mut self.free) {
            self.wait(r, timeout)?;
        }
        Ok(())
    }

    fn is_done(&mut self, run: RunId) -> Result<bool> {
        let r = self.runs.get(&run).context("unknown run")?;
        Ok(r.thread.as_ref().is_none_or(|t| t.is_finished()))
    }

    fn wait(&mut self, run: RunId, timeout: Duration) -> Result<()> {
        let r = self.runs.get_mut(&run).context("unknown run")?;
        let deadline = Instant::now() + timeout;
        let thread = r.thread.take().context("run already waited for")?;
        while !thread.is_finished() {
            if Instant::now() >= deadline {
                let cu = r.cu.clone();
                r.thread = Some(thread);
                bail!("{}: CU {cu} did not finish within {timeout:?}", self.label);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let cu = r.cu.clone();
        self.runs.remove(&run);
        thread
            .join()
            .map_err(|_| anyhow!("{}: CU {cu} panicked", self.label))?
            .with_context(|| format!("{}: CU {cu}", self.label))
    }
}

impl SimDevice {
    /// The bytes of `bank` as the loaded xclbin's MEM_TOPOLOGY declares it (as XRT, a buffer
    /// lives only in a bank of the loaded xclbin; `xclbin-pack` writes the banks and their
    /// sizes from the board's platform file, so no board fact is restated here).
    fn bank_bytes(&self, bank: &str) -> Result<usize> {
        let sim = self.loaded.as_ref().ok_or_else(|| {
            anyhow!(
                "{}: no xclbin loaded: load one before allocating in {bank}",
                self.label
            )
        })?;
        let body = sim
            .xclbin
            .section(xclbin::SectionKind::MemTopology)
            .map(|s| s.data.as_slice())
            .unwrap_or_default();
        let banks = xclbin::sections::parse_mem_topology(body)?;
        match banks.iter().find(|(tag, _)| tag == bank) {
            Some((_, size_kb)) => Ok(usize::try_from(*size_kb)? * 1024),
            None => bail!(
                "{}: memory bank {bank} is not in the loaded xclbin (its banks: {})",
                self.label,
                banks
                    .iter()
                    .map(|(t, _)| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}
