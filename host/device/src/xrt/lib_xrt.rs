//! XRT's C API (libxrt_coreutil from libxrt-dev 2.13) behind the exception barrier of
//! csrc/xrt_shim.cpp: the calls a card gets, nothing above them.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{Selector, XrtApi, XrtArg};

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
    #[allow(clippy::too_many_arguments)]
    fn af_xrt_run_start(
        k: *mut c_void,
        nargs: u32,
        index: *const u32,
        kinds: *const c_int,
        values: *const u64,
        sizes: *const u32,
        handles: *const *mut c_void,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn af_xrt_run_state(r: *mut c_void, err: *mut c_char, len: usize) -> c_int;
    fn af_xrt_run_wait(r: *mut c_void, timeout_ms: u32, err: *mut c_char, len: usize) -> c_int;
    fn af_xrt_run_close(r: *mut c_void) -> c_int;
}

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

struct Handle(*mut c_void);
// XRT handles are usable from any thread; access is serialised by the Mutex around them.
unsafe impl Send for Handle {}

/// A card opened through XRT.
pub struct LibXrt {
    selector: Selector,
    device: Handle,
    uuid: Option<[u8; 16]>,
    buffers: BTreeMap<u64, Handle>,
    kernels: Mutex<BTreeMap<String, Handle>>,
    runs: BTreeMap<u64, Handle>,
    next: u64,
}

impl LibXrt {
    /// Opens a card. With no card (or no XRT driver) this is a clean error starting with
    /// "no XRT device found", never an abort.
    pub fn open(selector: Selector) -> Result<LibXrt> {
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
        Ok(LibXrt {
            selector,
            device: Handle(h),
            uuid: None,
            buffers: BTreeMap::new(),
            kernels: Mutex::new(BTreeMap::new()),
            runs: BTreeMap::new(),
            next: 1,
        })
    }

    /// `kernel:{cu}`, opened once; exclusive access is what register access needs.
    fn kernel(&self, kernel: &str, cu: &str, exclusive: bool) -> Result<*mut c_void> {
        let uuid = self.uuid.context("no xclbin loaded")?;
        let mut kernels = self.kernels.lock().unwrap();
        if let Some(k) = kernels.get(cu) {
            return Ok(k.0);
        }
        let name = CString::new(format!("{kernel}:{{{cu}}}"))?;
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

    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

impl Drop for LibXrt {
    fn drop(&mut self) {
        unsafe {
            for (_, r) in std::mem::take(&mut self.runs) {
                af_xrt_run_close(r.0);
            }
            for (_, k) in std::mem::take(&mut *self.kernels.lock().unwrap()) {
                af_xrt_kernel_close(k.0);
            }
            for (_, b) in std::mem::take(&mut self.buffers) {
                af_xrt_bo_free(b.0);
            }
            af_xrt_device_close(self.device.0);
        }
    }
}

impl XrtApi for LibXrt {
    fn label(&self) -> String {
        self.selector.to_string()
    }

    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]> {
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
        Ok(uuid)
    }

    fn bo_alloc(&mut self, size: usize, group: u32) -> Result<u64> {
        let mut err = ErrBuf::new();
        let b = unsafe { af_xrt_bo_alloc(self.device.0, size, group, err.ptr(), ERR_LEN) };
        if b.is_null() {
            bail!(
                "{}: allocating {size} B in memory group {group}: {}",
                self.selector,
                err.text()
            );
        }
        let id = self.id();
        self.buffers.insert(id, Handle(b));
        Ok(id)
    }

    fn bo_write(&mut self, bo: u64, data: &[u8], seek: usize) -> Result<()> {
        let b = self.buffers.get(&bo).context("unknown buffer")?;
        let mut err = ErrBuf::new();
        if unsafe {
            af_xrt_bo_write(
                b.0,
                data.as_ptr().cast(),
                data.len(),
                seek,
                err.ptr(),
                ERR_LEN,
            )
        } != 0
        {
            bail!("{}: buffer write: {}", self.selector, err.text());
        }
        Ok(())
    }

    fn bo_read(&mut self, bo: u64, out: &mut [u8], skip: usize) -> Result<()> {
        let b = self.buffers.get(&bo).context("unknown buffer")?;
        let mut err = ErrBuf::new();
        if unsafe {
            af_xrt_bo_read(
                b.0,
                out.as_mut_ptr().cast(),
                out.len(),
                skip,
                err.ptr(),
                ERR_LEN,
            )
        } != 0
        {
            bail!("{}: buffer read: {}", self.selector, err.text());
        }
        Ok(())
    }

    fn read_register(&self, kernel: &str, cu: &str, offset: u32) -> Result<u32> {
        let k = self.kernel(kernel, cu, true)?;
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

    fn write_register(&self, kernel: &str, cu: &str, offset: u32, value: u32) -> Result<()> {
        let k = self.kernel(kernel, cu, true)?;
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

    fn run_start(&mut self, kernel: &str, cu: &str, args: &[(u32, XrtArg)]) -> Result<u64> {
        let k = self.kernel(kernel, cu, false)?;
        let mut index = Vec::new();
        let mut kinds = Vec::new();
        let mut values = Vec::new();
        let mut sizes = Vec::new();
        let mut handles = Vec::new();
        for (i, a) in args {
            index.push(*i);
            match a {
                XrtArg::Scalar { value, size } => {
                    kinds.push(0);
                    values.push(*value);
                    sizes.push(*size);
                    handles.push(std::ptr::null_mut());
                }
                XrtArg::Buffer(b) => {
                    let h = self.buffers.get(b).context("unknown buffer")?;
                    kinds.push(1);
                    values.push(0);
                    sizes.push(8);
                    handles.push(h.0);
                }
            }
        }
        let mut err = ErrBuf::new();
        let r = unsafe {
            af_xrt_run_start(
                k,
                args.len() as u32,
                index.as_ptr(),
                kinds.as_ptr(),
                values.as_ptr(),
                sizes.as_ptr(),
                handles.as_ptr(),
                err.ptr(),
                ERR_LEN,
            )
        };
        if r.is_null() {
            bail!("{}: starting CU {cu}: {}", self.selector, err.text());
        }
        let id = self.id();
        self.runs.insert(id, Handle(r));
        Ok(id)
    }

    fn run_state(&mut self, run: u64) -> Result<i32> {
        let r = self.runs.get(&run).context("unknown run")?;
        let mut err = ErrBuf::new();
        let state = unsafe { af_xrt_run_state(r.0, err.ptr(), ERR_LEN) };
        if state < 0 {
            bail!("{}: run state: {}", self.selector, err.text());
        }
        Ok(state)
    }

    fn run_wait(&mut self, run: u64, timeout: Duration) -> Result<i32> {
        let r = self.runs.get(&run).context("unknown run")?;
        let mut err = ErrBuf::new();
        let state = unsafe {
            af_xrt_run_wait(
                r.0,
                timeout.as_millis().min(u32::MAX as u128) as u32,
                err.ptr(),
                ERR_LEN,
            )
        };
        if state < 0 {
            bail!("{}: waiting for a run: {}", self.selector, err.text());
        }
        Ok(state)
    }

    fn run_close(&mut self, run: u64) {
        if let Some(r) = self.runs.remove(&run) {
            unsafe { af_xrt_run_close(r.0) };
        }
    }
}
