//! HLS kernels from their C-simulation shared libraries, through the C ABI of
//! hw/hls/include/af_sim_abi.h (version 1).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::stream::{Beat, StreamFifo};

pub const AF_SIM_ABI_VERSION: u32 = 1;
pub const AF_ARG_SCALAR: i32 = 0;
pub const AF_ARG_MEMORY: i32 = 1;
pub const AF_ARG_STREAM: i32 = 2;

#[repr(C)]
pub struct AfBeat {
    pub data: *mut u8,
    pub bytes: u32,
    pub keep: u64,
    pub last: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct AfStream {
    pub ctx: *mut c_void,
    pub read: Option<unsafe extern "C" fn(*mut c_void, *mut AfBeat) -> c_int>,
    pub write: Option<unsafe extern "C" fn(*mut c_void, *const AfBeat) -> c_int>,
}

#[repr(C)]
pub struct AfArg {
    pub name: *const c_char,
    pub kind: i32,
    pub scalar: u64,
    pub mem: *mut c_void,
    pub mem_bytes: u64,
    pub stream: AfStream,
}

type VersionFn = unsafe extern "C" fn() -> u32;
type PortsFn = unsafe extern "C" fn() -> *const c_char;
type RunFn = unsafe extern "C" fn(*const AfArg, u32) -> i32;
type ErrorFn = unsafe extern "C" fn() -> *const c_char;

/// A port of `af_kernel_ports()`: the shape of a kernel.json port (its `bundle` among the
/// kept extra keys), so the one type reads both.
pub use xclbin::description::Port as AbiPort;

pub struct HlsLibrary {
    pub path: String,
    handle: *mut c_void,
    run: RunFn,
    error: ErrorFn,
    pub ports: Vec<AbiPort>,
}

// The library's entry points are thread-safe by the ABI (each run on its own thread).
unsafe impl Send for HlsLibrary {}
unsafe impl Sync for HlsLibrary {}

fn dl_error() -> String {
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl HlsLibrary {
    pub fn load(path: &Path) -> Result<HlsLibrary> {
        let shown = path.display().to_string();
        let c = CString::new(shown.clone())?;
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            bail!(
                "{shown}: cannot load the HLS kernel library: {}",
                dl_error()
            );
        }
        let sym = |name: &str| -> Result<*mut c_void> {
            let n = CString::new(name).unwrap();
            let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            if p.is_null() {
                bail!("{shown}: no symbol {name}: not an af_sim_abi kernel library");
            }
            Ok(p)
        };
        let version: VersionFn = unsafe { std::mem::transmute(sym("af_kernel_abi_version")?) };
        let ports: PortsFn = unsafe { std::mem::transmute(sym("af_kernel_ports")?) };
        let run: RunFn = unsafe { std::mem::transmute(sym("af_kernel_run")?) };
        let error: ErrorFn = unsafe { std::mem::transmute(sym("af_kernel_error")?) };
        let v = unsafe { version() };
        if v != AF_SIM_ABI_VERSION {
            bail!("{shown}: ABI version {v}, this runtime speaks {AF_SIM_ABI_VERSION}; rebuild the kernel");
        }
        let json = unsafe { CStr::from_ptr(ports()) }
            .to_string_lossy()
            .into_owned();
        let ports: Vec<AbiPort> = serde_json::from_str(&json)
            .with_context(|| format!("{shown}: af_kernel_ports() is not a port list: {json}"))?;
        Ok(HlsLibrary {
            path: shown,
            handle,
            run,
            error,
            ports,
        })
    }

    /// Runs the body once with these arguments (blocking; call it on the kernel's thread).
    pub fn run(&self, args: &[AfArg]) -> Result<()> {
        let rc = unsafe { (self.run)(args.as_ptr(), args.len() as u32) };
        if rc != 0 {
            let e = unsafe { CStr::from_ptr((self.error)()) }
                .to_string_lossy()
                .into_owned();
            bail!("{}: af_kernel_run returned {rc}: {e}", self.path);
        }
        Ok(())
    }
}

impl Drop for HlsLibrary {
    fn drop(&mut self) {
        unsafe { libc::dlclose(self.handle) };
    }
}

/// The runtime's end of one stream argument (the `ctx` of its callbacks).
pub struct StreamEnd {
    pub fifo: Arc<StreamFifo>,
    pub timeout: Duration,
    pub error: std::sync::Mutex<Option<String>>,
}

impl StreamEnd {
    fn record(&self, e: anyhow::Error) -> c_int {
        *self.error.lock().unwrap() = Some(format!("{e:#}"));
        1
    }
}

/// `af_stream.read` of the runtime.
///
/// # Safety
/// `ctx` must be a live `StreamEnd` and `beat` a valid `af_beat` whose `data` holds `bytes`
/// bytes (or is null), as af_sim_abi.h specifies.
pub unsafe extern "C" fn stream_read(ctx: *mut c_void, beat: *mut AfBeat) -> c_int {
    let end = &*(ctx as *const StreamEnd);
    match end.fifo.pop(end.timeout) {
        Ok(Some(b)) => {
            let beat = &mut *beat;
            let n = (beat.bytes as usize).min(b.data.len());
            if !beat.data.is_null() {
                std::ptr::copy_nonoverlapping(b.data.as_ptr(), beat.data, n);
            }
            beat.keep = b.keep;
            beat.last = b.last as u8;
            0
        }
        Ok(None) => end.record(anyhow::anyhow!(
            "stream {} ended (producer finished)",
            end.fifo.name
        )),
        Err(e) => end.record(e),
    }
}

/// `af_stream.write` of the runtime.
///
/// # Safety
/// `ctx` must be a live `StreamEnd` and `beat` a valid `af_beat` with `bytes` bytes of data.
pub unsafe extern "C" fn stream_write(ctx: *mut c_void, beat: *const AfBeat) -> c_int {
    let end = &*(ctx as *const StreamEnd);
    let beat = &*beat;
    let data = std::slice::from_raw_parts(beat.data, beat.bytes as usize).to_vec();
    match end.fifo.push(
        Beat {
            data,
            keep: beat.keep,
            last: beat.last != 0,
        },
        end.timeout,
    ) {
        Ok(()) => 0,
        Err(e) => end.record(e),
    }
}
