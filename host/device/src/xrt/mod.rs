//! Real cards through XRT: `XrtDevice` is everything the host driver needs above XRT's
//! calls (the deployment description, memory groups by bank, arguments bound by the
//! kernels' metadata as XRT's own parser reads it, run states); `XrtApi` is the calls
//! themselves, made by `LibXrt` (libxrt_coreutil 2.13) or, without a card, by `SimCard`
//! (a simulated card behind the same calls).

mod lib_xrt;
pub mod metadata;
pub mod sim_card;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use xclbin::DeviceDescription;

use crate::{BufferId, CuInfo, Device, KernelArg, RunId};
pub use lib_xrt::LibXrt;
use metadata::{Bound, Metadata};
pub use sim_card::SimCard;

/// Which card to open.
#[derive(Debug, Clone)]
pub enum Selector {
    Index(u32),
    Bdf(String),
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Index(i) => write!(f, "xrtDeviceOpen({i})"),
            Selector::Bdf(b) => write!(f, "xrtDeviceOpenByBDF(\"{b}\")"),
        }
    }
}

/// One argument of `XrtApi::run_start`, at the kernel's argument index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XrtArg {
    /// A scalar of `size` bytes (the metadata's size).
    Scalar { value: u64, size: u32 },
    /// A buffer object of `bo_alloc`.
    Buffer(u64),
}

/// `ert_cmd_state` of XRT's `ert.h`.
pub const ERT_CMD_STATE_RUNNING: i32 = 3;
pub const ERT_CMD_STATE_COMPLETED: i32 = 4;

/// The calls XRT's C API offers the host driver, one method per call.
pub trait XrtApi: Send {
    /// The device for messages.
    fn label(&self) -> String;
    /// `xrtDeviceLoadXclbinFile`, `xrtDeviceGetXclbinUUID`.
    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]>;
    /// `xrtBOAlloc(device, size, 0, group)`.
    fn bo_alloc(&mut self, size: usize, group: u32) -> Result<u64>;
    /// `xrtBOWrite` + `xrtBOSync(XCL_BO_SYNC_BO_TO_DEVICE)`.
    fn bo_write(&mut self, bo: u64, data: &[u8], seek: usize) -> Result<()>;
    /// `xrtBOSync(XCL_BO_SYNC_BO_FROM_DEVICE)` + `xrtBORead`.
    fn bo_read(&mut self, bo: u64, out: &mut [u8], skip: usize) -> Result<()>;
    /// `xrtKernelReadRegister` on `kernel:{cu}` (opened exclusively).
    fn read_register(&self, kernel: &str, cu: &str, offset: u32) -> Result<u32>;
    fn write_register(&self, kernel: &str, cu: &str, offset: u32, value: u32) -> Result<()>;
    /// `xrtRunOpen`, `xrtRunSetArg(run, index, value)` per argument, `xrtRunStart`.
    fn run_start(&mut self, kernel: &str, cu: &str, args: &[(u32, XrtArg)]) -> Result<u64>;
    /// `xrtRunState`.
    fn run_state(&mut self, run: u64) -> Result<i32>;
    /// `xrtRunWaitFor`.
    fn run_wait(&mut self, run: u64, timeout: Duration) -> Result<i32>;
    /// `xrtRunClose`.
    fn run_close(&mut self, run: u64);
    /// An `ap_ctrl_none` CU takes part in the run. A card has nothing to call: the CU runs
    /// since the xclbin was loaded.
    fn free_running(&mut self, _cu: &str) -> Result<()> {
        Ok(())
    }
    /// What a card's free-running CUs report: nothing.
    fn free_running_error(&mut self) -> Result<()> {
        Ok(())
    }
    fn free_running_end(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }
}

pub struct XrtDevice<A: XrtApi = LibXrt> {
    api: A,
    description: Option<DeviceDescription>,
    metadata: Metadata,
    /// Buffer: XRT buffer object, size, memory group.
    buffers: BTreeMap<BufferId, (u64, usize, u32)>,
    runs: BTreeMap<RunId, (String, u64)>,
    next: u64,
}

impl XrtDevice<LibXrt> {
    /// Opens a card (see `LibXrt::open`).
    pub fn open(selector: Selector) -> Result<XrtDevice<LibXrt>> {
        Ok(XrtDevice::over(LibXrt::open(selector)?))
    }
}

impl<A: XrtApi> XrtDevice<A> {
    pub fn over(api: A) -> XrtDevice<A> {
        XrtDevice {
            api,
            description: None,
            metadata: Metadata::default(),
            buffers: BTreeMap::new(),
            runs: BTreeMap::new(),
            next: 1,
        }
    }

    pub fn api(&self) -> &A {
        &self.api
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    fn kernel_of(&self, cu: &str) -> Result<String> {
        self.metadata
            .cus
            .get(cu)
            .map(|c| c.kernel.clone())
            .with_context(|| {
                format!(
                    "{}: the loaded xclbin has no CU '{cu}' (XRT's metadata)",
                    self.api.label()
                )
            })
    }
}

impl<A: XrtApi> Device for XrtDevice<A> {
    fn name(&self) -> String {
        self.api.label()
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
        // XRT's parser for what XRT binds (CUs, arguments, memory groups); ours for the
        // deployment's description, which XRT does not read.
        let metadata = Metadata::read(path)?;
        let description = xclbin::read_xclbin(path)
            .with_context(|| format!("{}: its device description", path.display()))?
            .description;
        let uuid = self.api.load_xclbin(path)?;
        self.metadata = metadata;
        self.description = Some(description);
        Ok(uuid)
    }

    fn description(&self) -> Result<&DeviceDescription> {
        self.description.as_ref().context("no xclbin loaded")
    }

    fn compute_units(&self) -> Result<Vec<CuInfo>> {
        // In the description's order (the order the simulation lists them), as XRT reads them.
        let d = self.description()?;
        d.kernels
            .iter()
            .map(|k| {
                let c = self.metadata.cus.get(&k.cu).with_context(|| {
                    format!(
                        "{}: CU {} of the description is not in the xclbin's IP_LAYOUT (XRT)",
                        self.api.label(),
                        k.cu
                    )
                })?;
                Ok(CuInfo {
                    name: k.cu.clone(),
                    kernel: c.kernel.clone(),
                    kind: k.kind.clone(),
                    base_address: c.base_address,
                })
            })
            .collect()
    }

    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId> {
        let group = self.metadata.group_of(bank).with_context(|| {
            format!(
                "{}: bank {bank} is not among the xclbin's memories (XRT reads: {})",
                self.api.label(),
                self.metadata
                    .mems
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let bo = self.api.bo_alloc(size, group)?;
        let id = BufferId(self.next);
        self.next += 1;
        self.buffers.insert(id, (bo, size, group));
        Ok(id)
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()> {
        let (bo, size, _) = *self.buffers.get(&buffer).context("unknown buffer")?;
        if offset + data.len() > size {
            bail!(
                "write of {} B at {offset} overruns a {size} B buffer",
                data.len()
            );
        }
        self.api.bo_write(bo, data, offset)
    }

    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()> {
        let (bo, size, _) = *self.buffers.get(&buffer).context("unknown buffer")?;
        if offset + out.len() > size {
            bail!(
                "read of {} B at {offset} overruns a {size} B buffer",
                out.len()
            );
        }
        self.api.bo_read(bo, out, offset)
    }

    fn read_register(&self, cu: &str, offset: u32) -> Result<u32> {
        self.api.read_register(&self.kernel_of(cu)?, cu, offset)
    }

    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()> {
        self.api
            .write_register(&self.kernel_of(cu)?, cu, offset, value)
    }

    fn start(&mut self, cu: &str, args: &[(String, KernelArg)]) -> Result<RunId> {
        let kernel = self.kernel_of(cu)?;
        let bound = self
            .metadata
            .bind(cu, args, |b| self.buffers.get(&b).map(|(_, _, g)| *g))
            .with_context(|| self.api.label())?;
        let mut xrt = Vec::new();
        for (index, b) in bound {
            xrt.push((
                index,
                match b {
                    Bound::Scalar { value, size } => XrtArg::Scalar { value, size },
                    Bound::Buffer(id) => XrtArg::Buffer(self.buffers[&id].0),
                },
            ));
        }
        let r = self.api.run_start(&kernel, cu, &xrt)?;
        let id = RunId(self.next);
        self.next += 1;
        self.runs.insert(id, (cu.to_string(), r));
        Ok(id)
    }

    fn begin_free_running(&mut self, cu: &str) -> Result<()> {
        let c =
            self.metadata.cus.get(cu).with_context(|| {
                format!("{}: the loaded xclbin has no CU '{cu}'", self.api.label())
            })?;
        if c.control != "none" {
            bail!(
                "{}: CU {cu} ({}) is not free-running (control {} in the xclbin's metadata): start it",
                self.api.label(),
                c.kernel,
                c.control
            );
        }
        self.api.free_running(cu)
    }

    fn check_free_running(&mut self) -> Result<()> {
        self.api.free_running_error()
    }

    fn end_free_running(&mut self, timeout: Duration) -> Result<()> {
        self.api.free_running_end(timeout)
    }

    fn is_done(&mut self, run: RunId) -> Result<bool> {
        let (cu, r) = self.runs.get(&run).context("unknown run")?.clone();
        match self.api.run_state(r)? {
            ERT_CMD_STATE_COMPLETED => Ok(true),
            s if s <= ERT_CMD_STATE_RUNNING || s == 7 => Ok(false),
            s => bail!("{}: CU {cu}: run ended in state {s}", self.api.label()),
        }
    }

    fn wait(&mut self, run: RunId, timeout: Duration) -> Result<()> {
        let (cu, r) = self.runs.get(&run).context("unknown run")?.clone();
        let state = self.api.run_wait(r, timeout)?;
        if state != ERT_CMD_STATE_COMPLETED {
            bail!(
                "{}: CU {cu}: run did not complete within {timeout:?} (state {state})",
                self.api.label()
            );
        }
        self.runs.remove(&run);
        self.api.run_close(r);
        Ok(())
    }
}
