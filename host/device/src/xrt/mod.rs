//! Real cards through XRT's C API (libxrt_coreutil from libxrt-dev 2.13), behind the
//! exception barrier of csrc/xrt_shim.cpp.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::{BufferId, CuInfo, Device, KernelArg, RunId};

const ERR_LEN: usize = 512;

extern "C" {
    fn af_xrt_device_open(
        index: u32,
        bdf: *const c_char,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn af_xrt_device_close(dev: *mut c_void) -> c_int;
    fn af_xrt_load_xclbin(
        dev: *mut c_void,
        path: *const c_char,
        uuid: *mut u8,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn af_xrt_bo_alloc(
        dev: *mut c_void,
        size: usize,
        group: u32,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn af_xrt_bo_write(
        bo: *mut c_void,
        src: *const c_void,
        size: usize,
        seek: usize,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn af_xrt_bo_read(
        bo: *mut c_void,
        dst: *mut c_void,
        size: usize,
        skip: usize,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn af_xrt_bo_free(bo: *mut c_void) -> c_int;
    fn af_xrt_kernel_open(
        dev: *mut c_void,
        uuid: *const u8,
        name: *const c_char,
        exclusive: c_int,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn af_xrt_kernel_close(k: *mut c_void) -> c_int;
    fn af_xrt_read_register(
        k: *mut c_void,
        offset: u32,
        value: *mut u32,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn af_xrt_write_register(
        k: *mut c_void,
        offset: u32,
        value: u32,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn af_xrt_run_start(
        k: *mut c_void,
        nargs: u32,
        kinds: *const c_int,
        values: *const u64,
        handles: *const *mut c_void,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn af_xrt_run_wait(r: *mut c_void, timeout_ms: u32, err: *mut c_char, len: usize) -> c_int;
    fn af_xrt_run_close(r: *mut c_void) -> c_int;
}

/// `ERT_CMD_STATE_COMPLETED` of XRT's `ert.h`.
const ERT_CMD_STATE_COMPLETED: c_int = 4;

struct ErrBuf([c_char; ERR_LEN]);

impl ErrBuf {
    fn new() -> Self {
        ErrBuf([0; ERR_LEN])
    }
    fn ptr(&mut self) -> *mut c_char {
        self.0.as_mut_ptr()
    }
    fn text(&self) -> String {
        unsafe { CStr::from_ptr(self.0.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }
}

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

struct Handle(*mut c_void);
// XRT handles are usable from any thread; access is serialised by the Mutex around them.
unsafe impl Send for Handle {}

pub struct XrtDevice {
    selector: Selector,
    device: Handle,
    uuid: Option<[u8; 16]>,
    cus: Vec<CuInfo>,
    banks: Vec<String>,
    buffers: BTreeMap<BufferId, (Handle, usize)>,
    kernels: Mutex<BTreeMap<String, Handle>>,
    runs: BTreeMap<RunId, Handle>,
    next: u64,
}

impl XrtDevice {
    /// Opens a card. With no card (or no XRT driver) this is a clean error starting with
    /// "no XRT device found", never an abort.
    pub fn open(selector: Selector) -> Result<XrtDevice> {
        let mut err = ErrBuf::new();
        let bdf = match &selector {
            Selector::Bdf(b) => Some(CString::new(b.as_str())?),
            Selector::Index(_) => None,
        };
        let index = match selector {
            Selector::Index(i) => i,
            Selector::Bdf(_) => 0,
        };
        let h = unsafe {
            af_xrt_device_open(
                index,
                bdf.as_ref().map_or(std::ptr::null(), |b| b.as_ptr()),
                err.ptr(),
                ERR_LEN,
            )
        };
        if h.is_null() {
            bail!(
                "no XRT device found ({selector}: {}); check `xbutil examine`, that the card's user BDF is right and that XILINX_XRT points at the XRT install",
                err.text()
            );
        }
        Ok(XrtDevice {
            selector,
            device: Handle(h),
            uuid: None,
            cus: vec![],
            banks: vec![],
            buffers: BTreeMap::new(),
            kernels: Mutex::new(BTreeMap::new()),
            runs: BTreeMap::new(),
            next: 1,
        })
    }

    fn kernel(&self, cu: &str, exclusive: bool) -> Result<*mut c_void> {
        let uuid = self.uuid.context("no xclbin loaded")?;
        let info =
            self.cus.iter().find(|c| c.name == cu).with_context(|| {
                format!("{}: the loaded xclbin has no CU '{cu}'", self.selector)
            })?;
        let mut kernels = self.kernels.lock().unwrap();
        if let Some(k) = kernels.get(cu) {
            return Ok(k.0);
        }
        let name = CString::new(format!("{}:{{{}}}", info.kernel, cu))?;
        let mut err = ErrBuf::new();
        let k = unsafe {
            af_xrt_kernel_open(
                self.device.0,
                uuid.as_ptr(),
                name.as_ptr(),
                exclusive as c_int,
                err.ptr(),
                ERR_LEN,
            )
        };
        if k.is_null() {
            bail!("{}: opening CU {cu}: {}", self.selector, err.text());
        }
        kernels.insert(cu.to_string(), Handle(k));
        Ok(k)
    }
}

impl Drop for XrtDevice {
    fn drop(&mut self) {
        unsafe {
            for (_, r) in std::mem::take(&mut self.runs) {
                af_xrt_run_close(r.0);
            }
            for (_, k) in std::mem::take(&mut *self.kernels.lock().unwrap()) {
                af_xrt_kernel_close(k.0);
            }
            for (_, (b, _)) in std::mem::take(&mut self.buffers) {
                af_xrt_bo_free(b.0);
            }
            af_xrt_device_close(self.device.0);
        }
    }
}

impl Device for XrtDevice {
    fn name(&self) -> String {
        self.selector.to_string()
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
        // Our own reader gives the CU list and bank order (the same sections XRT reads).
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let x = xclbin::Xclbin::from_bytes(&path.display().to_string(), &bytes)?;
        let ip = x
            .section(xclbin::SectionKind::IpLayout)
            .map(|s| xclbin::sections::parse_ip_layout(&s.data))
            .transpose()?
            .unwrap_or_default();
        let mem = x
            .section(xclbin::SectionKind::MemTopology)
            .map(|s| xclbin::sections::parse_mem_topology(&s.data))
            .transpose()?
            .unwrap_or_default();
        let c = CString::new(path.to_str().context("xclbin path is not UTF-8")?)?;
        let mut uuid = [0u8; 16];
        let mut err = ErrBuf::new();
        if unsafe {
            af_xrt_load_xclbin(
                self.device.0,
                c.as_ptr(),
                uuid.as_mut_ptr(),
                err.ptr(),
                ERR_LEN,
            )
        } != 0
        {
            bail!(
                "{}: loading {}: {}",
                self.selector,
                path.display(),
                err.text()
            );
        }
        self.uuid = Some(uuid);
        self.cus = ip
            .into_iter()
            .map(|(name, base, _)| {
                let (kernel, cu) = name
                    .split_once(':')
                    .map_or((name.clone(), name.clone()), |(k, c)| (k.into(), c.into()));
                CuInfo {
                    name: cu,
                    kernel,
                    kind: "xrt".into(),
                    base_address: base,
                }
            })
            .collect();
        self.banks = mem.into_iter().map(|(tag, _)| tag).collect();
        Ok(uuid)
    }

    fn compute_units(&self) -> Result<Vec<CuInfo>> {
        Ok(self.cus.clone())
    }

    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId> {
        let group = self.banks.iter().position(|b| b == bank).with_context(|| {
            format!(
                "{}: bank {bank} is not in the xclbin's MEM_TOPOLOGY ({:?})",
                self.selector, self.banks
            )
        })?;
        let mut err = ErrBuf::new();
        let b = unsafe { af_xrt_bo_alloc(self.device.0, size, group as u32, err.ptr(), ERR_LEN) };
        if b.is_null() {
            bail!(
                "{}: allocating {size} B in {bank}: {}",
                self.selector,
                err.text()
            );
        }
        let id = BufferId(self.next);
        self.next += 1;
        self.buffers.insert(id, (Handle(b), size));
        Ok(id)
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()> {
        let (b, size) = self.buffers.get(&buffer).context("unknown buffer")?;
        if offset + data.len() > *size {
            bail!(
                "write of {} B at {offset} overruns a {size} B buffer",
                data.len()
            );
        }
        let mut err = ErrBuf::new();
        if unsafe {
            af_xrt_bo_write(
                b.0,
                data.as_ptr().cast(),
                data.len(),
                offset,
                err.ptr(),
                ERR_LEN,
            )
        } != 0
        {
            bail!("{}: buffer write: {}", self.selector, err.text());
        }
        Ok(())
    }

    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()> {
        let (b, size) = self.buffers.get(&buffer).context("unknown buffer")?;
        if offset + out.len() > *size {
            bail!(
                "read of {} B at {offset} overruns a {size} B buffer",
                out.len()
            );
        }
        let mut err = ErrBuf::new();
        if unsafe {
            af_xrt_bo_read(
                b.0,
                out.as_mut_ptr().cast(),
                out.len(),
                offset,
                err.ptr(),
                ERR_LEN,
            )
        } != 0
        {
            bail!("{}: buffer read: {}", self.selector, err.text());
        }
        Ok(())
    }

    fn read_register(&self, cu: &str, offset: u32) -> Result<u32> {
        let k = self.kernel(cu, true)?;
        let mut value = 0u32;
        let mut err = ErrBuf::new();
        if unsafe { af_xrt_read_register(k, offset, &mut value, err.ptr(), ERR_LEN) } != 0 {
            bail!(
                "{}: CU {cu} register {offset:#x}: {}",
                self.selector,
                err.text()
            );
        }
        Ok(value)
    }

    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()> {
        let k = self.kernel(cu, true)?;
        let mut err = ErrBuf::new();
        if unsafe { af_xrt_write_register(k, offset, value, err.ptr(), ERR_LEN) } != 0 {
            bail!(
                "{}: CU {cu} register {offset:#x}: {}",
                self.selector,
                err.text()
            );
        }
        Ok(())
    }

    fn start(&mut self, cu: &str, args: &[KernelArg]) -> Result<RunId> {
        let k = self.kernel(cu, false)?;
        let mut kinds = Vec::new();
        let mut values = Vec::new();
        let mut handles = Vec::new();
        for a in args {
            match a {
                KernelArg::Scalar(v) => {
                    kinds.push(0);
                    values.push(*v);
                    handles.push(std::ptr::null_mut());
                }
                KernelArg::Buffer(b) => {
                    let (h, _) = self.buffers.get(b).context("unknown buffer")?;
                    kinds.push(1);
                    values.push(0);
                    handles.push(h.0);
                }
                KernelArg::Stream => {
                    kinds.push(0);
                    values.push(0);
                    handles.push(std::ptr::null_mut());
                }
            }
        }
        let mut err = ErrBuf::new();
        let r = unsafe {
            af_xrt_run_start(
                k,
                args.len() as u32,
                kinds.as_ptr(),
                values.as_ptr(),
                handles.as_ptr(),
                err.ptr(),
                ERR_LEN,
            )
        };
        if r.is_null() {
            bail!("{}: starting CU {cu}: {}", self.selector, err.text());
        }
        let id = RunId(self.next);
        self.next += 1;
        self.runs.insert(id, Handle(r));
        Ok(id)
    }

    fn wait(&mut self, run: RunId, timeout: Duration) -> Result<()> {
        let r = self.runs.get(&run).ok_or_else(|| anyhow!("unknown run"))?;
        let mut err = ErrBuf::new();
        let state = unsafe {
            af_xrt_run_wait(
                r.0,
                timeout.as_millis().min(u32::MAX as u128) as u32,
                err.ptr(),
                ERR_LEN,
            )
        };
        if state != ERT_CMD_STATE_COMPLETED {
            bail!(
                "{}: run did not complete within {timeout:?} (state {state}{})",
                self.selector,
                if err.text().is_empty() {
                    String::new()
                } else {
                    format!(": {}", err.text())
                }
            );
        }
        let r = self.runs.remove(&run).unwrap();
        unsafe { af_xrt_run_close(r.0) };
        Ok(())
    }
}
