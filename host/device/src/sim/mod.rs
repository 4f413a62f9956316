//! Simulated devices: the sim xclbin containers of the build graph, read back and run.
//!
//! - AuroraFlow CUs: emulated links with the kernel's flow control (`link`, `aurora_cu`);
//! - HLS CUs: their C-simulation libraries through af_sim_abi.h (`hls`), one thread per run;
//! - FINN CUs: a `FinnPartition` plugged in by the caller (`finn`);
//! - streams between CUs: bounded FIFOs of the depth the link configuration gives.

pub mod aurora_cu;
pub mod finn;
pub mod hls;
pub mod link;
pub mod stream;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use xclbin::read::{Payload, SimXclbin};
use xclbin::{DeviceDescription, KernelEntry};

use crate::{BufferId, CuInfo, Device, KernelArg, RunId};
use aurora_cu::{connect_local, AuroraCu};
use finn::FinnFactory;
use hls::{AfArg, AfStream, HlsLibrary, StreamEnd};
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
/// What an HLS run holds: the arguments, the names they point into, the stream ends their
/// callbacks point at (boxed: the addresses must not move while the run lasts).
#[allow(clippy::vec_box)]
type HlsArgs = (Vec<AfArg>, Vec<CString>, Vec<Box<StreamEnd>>);

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

/// Bytes a simulated bank may hold in total (the U280's HBM pseudo-channel is 256 MB).
const BANK_BYTES: usize = 256 << 20;

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

    fn payload_path(&self, k: &KernelEntry) -> Result<Option<PathBuf>> {
        let (Some(sim), Some(name)) = (&self.loaded, &k.payload) else {
            return Ok(None);
        };
        let dir = self.workdir.as_ref().unwrap().path().join(name);
        let file = dir.with_extension("so");
        // CUs of one kernel share the payload; never rewrite a library that is mapped.
        if dir.exists() {
            return Ok(Some(dir));
        }
        if file.exists() {
            return Ok(Some(file));
        }
        match sim.payload(name)? {
            Payload::File(bytes) => {
                std::fs::write(&file, bytes)?;
                Ok(Some(file))
            }
            Payload::Dir(_) => {
                xclbin::archive::unpack_to(&sim.payloads[name], &dir)?;
                Ok(Some(dir))
            }
        }
    }

    fn build_cus(&mut self) -> Result<()> {
        let d = self.loaded.as_ref().unwrap().description.clone();
        for k in &d.kernels {
            let cu = match k.kind.as_str() {
                "rtl"
                    if k.kernel.starts_with("aurora_flow")
                        || k.params.contains_key("rx_fifo_size") =>
                {
                    let cable = d
                        .links
                        .iter()
                        .find(|l| l.cu == k.cu)
                        .map_or(0.0, |l| l.cable_m);
                    let mut cu =
                        AuroraCu::new(&k.cu, &k.params, cable, self.options.channel_cycles)?;
                    cu.params.stall_timeout = self.options.stall_timeout;
                    SimCu::Aurora(Arc::new(cu))
                }
                "hls" => {
                    let path = self.payload_path(k)?.with_context(|| {
                        format!(
                            "{}: HLS CU {} has no payload (its C-simulation library)",
                            self.label, k.cu
                        )
                    })?;
                    SimCu::Hls {
                        lib: Arc::new(HlsLibrary::load(&path)?),
                        regs: Mutex::new(BTreeMap::new()),
                    }
                }
                "finn" => SimCu::Finn {
                    dir: self.payload_path(k)?.unwrap_or_default(),
                },
                other => bail!(
                    "{}: CU {} has kind '{other}': expected rtl, hls or finn",
                    self.label,
                    k.cu
                ),
            };
            self.cus.insert(k.cu.clone(), cu);
        }
        for s in &d.streams {
            let name = format!("{}: {} -> {}", d.device, s.from, s.to);
            let depth = s.depth.max(2) as usize;
            let fifo = Arc::new(match converter_widths(s) {
                Some((from, to)) => StreamFifo::with_converter(name, depth, from, to)?,
                None => StreamFifo::new(name, depth),
            });
            self.streams.insert(s.from.clone(), fifo.clone());
            self.streams.insert(s.to.clone(), fifo);
        }
        // Links whose both ends are on this device (loopback cabling).
        for l in &d.links {
            if l.peer_device != d.device {
                continue;
            }
            let a = self.aurora(&l.cu)?;
            let ports = self.aurora_ports();
            let b = ports
                .get(&l.peer_port)
                .with_context(|| {
                    format!(
                        "{}: link {}:{} -> port {}: no AuroraFlow CU on that port",
                        self.label, d.device, l.port, l.peer_port
                    )
                })?
                .clone();
            if a.rx_link().is_none() {
                connect_local(&a, &b, &d.device, &d.device);
            }
        }
        Ok(())
    }

    fn hls_args(
        &self,
        cu: &str,
        lib: &HlsLibrary,
        named: &[(String, KernelArg)],
    ) -> Result<HlsArgs> {
        let mut args = Vec::new();
        let mut names = Vec::new();
        let mut ends = Vec::new();
        for (name, value) in named {
            let c = CString::new(name.as_str())?;
            let (kind, scalar, mem, bytes) = match value {
                KernelArg::Scalar(v) => (hls::AF_ARG_SCALAR, *v, std::ptr::null_mut(), 0),
                KernelArg::Buffer(b) => {
                    let (_, buf) = self.buffers.get(b).context("unknown buffer")?;
                    // The Vec is never resized after allocation: the pointer stays valid for
                    // the run, and the host does not touch the buffer until wait() returns.
                    let mut g = buf.lock().unwrap();
                    (hls::AF_ARG_MEMORY, 0, g.as_mut_ptr().cast(), g.len() as u64)
                }
                KernelArg::Stream => continue,
            };
            args.push(AfArg {
                name: c.as_ptr(),
                kind,
                scalar,
                mem,
                mem_bytes: bytes,
                stream: AfStream {
                    ctx: std::ptr::null_mut(),
                    read: None,
                    write: None,
                },
            });
            names.push(c);
        }
        for port in lib.ports.iter().filter(|p| p.kind == "axis") {
            let endpoint = format!("{cu}.{}", port.name);
            let fifo = self.streams.get(&endpoint).cloned().with_context(|| {
                format!("{}: stream port {endpoint} is not connected in the link configuration (streams)", self.label)
            })?;
            let end = Box::new(StreamEnd {
                fifo,
                timeout: self.options.stall_timeout,
                error: Mutex::new(None),
            });
            let c = CString::new(port.name.as_str())?;
            args.push(AfArg {
                name: c.as_ptr(),
                kind: hls::AF_ARG_STREAM,
                scalar: 0,
                mem: std::ptr::null_mut(),
                mem_bytes: 0,
                stream: AfStream {
                    ctx: (&*end as *const StreamEnd) as *mut _,
                    read: Some(hls::stream_read),
                    write: Some(hls::stream_write),
                },
            });
            names.push(c);
            ends.push(end);
        }
        Ok((args, names, ends))
    }

    /// Starts an HLS CU with named arguments (the names of the kernel's C++ signature);
    /// its stream ports are bound to the FIFOs of the link configuration.
    pub fn start_named(&mut self, cu: &str, named: &[(String, KernelArg)]) -> Result<RunId> {
        let lib = match self.cus.get(cu) {
            Some(SimCu::Hls { lib, .. }) => lib.clone(),
            Some(SimCu::Aurora(_)) => bail!(
                "{}: CU {cu} is free-running (ap_ctrl_none): it has no start",
                self.label
            ),
            Some(SimCu::Finn { .. }) => return self.start_finn(cu),
            None => bail!("{}: no CU {cu} in the loaded xclbin", self.label),
        };
        let (args, names, ends) = self.hls_args(cu, &lib, named)?;
        // Field 1 is never read but must live as long as the run: the AfArg names point into it.
        #[allow(dead_code, clippy::vec_box)]
        struct Send_(Vec<AfArg>, Vec<CString>, Vec<Box<StreamEnd>>);
        // Raw pointers into buffers and the boxed stream ends travel with the thread.
        unsafe impl Send for Send_ {}
        let bundle = Send_(args, names, ends);
        let outputs: Vec<Arc<StreamFifo>> = lib
            .ports
            .iter()
            .filter(|p| p.kind == "axis" && p.dir.as_deref() == Some("out"))
            .filter_map(|p| self.streams.get(&format!("{cu}.{}", p.name)).cloned())
            .collect();
        // A new run of this CU: its output streams carry words again after the last run's end.
        for o in &outputs {
            o.reopen();
        }
        let name = format!("{}:{cu}", self.label);
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                let b = bundle;
                let r = lib.run(&b.0);
                // every output ends, even after an error, so no consumer waits for it
                let closed: Vec<Result<()>> = outputs.iter().map(|o| o.close()).collect();
                let r = r.and_then(|()| closed.into_iter().collect::<Result<()>>());
                r.map_err(|e| {
                    let stream_errors: Vec<String> =
                        b.2.iter()
                            .filter_map(|e| e.error.lock().unwrap().clone())
                            .collect();
                    if stream_errors.is_empty() {
                        e
                    } else {
                        anyhow!("{e} ({})", stream_errors.join("; "))
                    }
                })
            })?;
        Ok(self.add_run(cu, thread))
    }

    /// Whether `cu` is free-running (ap_ctrl_none in the description) with one input
    /// stream, whose body the hardware restarts for each packet (a pass-through). A
    /// free-running source without input (a tie-off) runs its body once.
    fn restarts_per_packet(&self, cu: &str) -> bool {
        let free = self
            .description()
            .ok()
            .and_then(|d| d.kernel(cu))
            .is_some_and(|k| k.control() == "ap_ctrl_none");
        let inputs = match self.cus.get(cu) {
            Some(SimCu::Hls { lib, .. }) => lib
                .ports
                .iter()
                .filter(|p| p.kind == "axis" && p.dir.as_deref() == Some("in"))
                .count(),
            _ => 0,
        };
        free && inputs == 1
    }

    /// A free-running HLS CU (ap_ctrl_none, e.g. the ring's `forward`): the hardware
    /// restarts its body as soon as it returns, so the body is called again for every
    /// packet that arrives on its input, with its outputs open across the calls. Between
    /// packets it is idle, not stalled: it ends when its input ends (its producer closed the
    /// stream) or `end_free_running` stops it, and only then are its outputs closed.
    fn start_free_hls(&mut self, cu: &str) -> Result<RunId> {
        let Some(SimCu::Hls { lib, .. }) = self.cus.get(cu) else {
            unreachable!("checked by the caller")
        };
        let lib = lib.clone();
        let stream_of = |dir: &str| -> Vec<Arc<StreamFifo>> {
            lib.ports
                .iter()
                .filter(|p| p.kind == "axis" && p.dir.as_deref() == Some(dir))
                .filter_map(|p| self.streams.get(&format!("{cu}.{}", p.name)).cloned())
                .collect()
        };
        let (inputs, outputs) = (stream_of("in"), stream_of("out"));
        let [input] = &inputs[..] else {
            bail!(
                "{}: free-running CU {cu} has {} input streams connected; the simulation restarts \
                 a free-running HLS kernel per packet of its one input",
                self.label,
                inputs.len()
            );
        };
        let input = input.clone();
        let (args, names, ends) = self.hls_args(cu, &lib, &[])?;
        #[allow(dead_code, clippy::vec_box)]
        struct Send_(Vec<AfArg>, Vec<CString>, Vec<Box<StreamEnd>>);
        // As in start_named: the boxed stream ends travel with the thread.
        unsafe impl Send for Send_ {}
        let bundle = Send_(args, names, ends);
        for o in &outputs {
            o.reopen();
        }
        let stop = self.stop_free.clone();
        let thread = std::thread::Builder::new()
            .name(format!("{}:{cu}", self.label))
            .spawn(move || {
                let b = bundle;
                let mut r = Ok(());
                while r.is_ok() && input.wait_beat(&stop)? {
                    r = lib.run(&b.0).map_err(|e| {
                        let why: Vec<String> =
                            b.2.iter()
                                .filter_map(|e| e.error.lock().unwrap().clone())
                                .collect();
                        anyhow!("{e} ({})", why.join("; "))
                    });
                }
                let closed: Vec<Result<()>> = outputs.iter().map(|o| o.close()).collect();
                r.and_then(|()| closed.into_iter().collect::<Result<()>>())
            })?;
        Ok(self.add_run(cu, thread))
    }

    /// Joins each AuroraFlow CU's `tx_axis` / `rx_axis` stream FIFOs (the link
    /// configuration's streams) to its links: one thread moves words from `tx_axis` into
    /// the link until that stream closes, another from the link into `rx_axis` until the
    /// link's sender closes. Started by the caller when traffic begins, since an idle link
    /// is a stall after the timeout.
    pub fn start_link_pumps(&mut self) -> Result<Vec<RunId>> {
        let mut ids = Vec::new();
        for cu in self.aurora_ports().into_values() {
            ids.extend(self.start_pumps_of(&cu, false));
        }
        Ok(ids)
    }

    /// Whether the producer of `endpoint` (a stream's consumer end) is started by the host
    /// (ap_ctrl_hs / ap_ctrl_chain): its runs end one by one, the stream does not.
    fn fed_by_host_started_cu(&self, endpoint: &str) -> bool {
        let Ok(d) = self.description() else {
            return false;
        };
        d.streams
            .iter()
            .find(|s| s.to == endpoint)
            .and_then(|s| s.from.split('.').next())
            .and_then(|p| d.kernel(p))
            .is_some_and(|k| k.control() != "ap_ctrl_none")
    }

    /// The link pumps of one AuroraFlow CU (see `start_link_pumps`). With `session` (the CU
    /// takes part until `end_free_running`) and a host-started kernel feeding `tx_axis` (the
    /// benchmark's `send`), the end of one of its runs ends a message, not the link: the
    /// pump waits for the next run until `end_free_running`.
    fn start_pumps_of(&mut self, cu: &Arc<AuroraCu>, session: bool) -> Vec<RunId> {
        let timeout = self.options.stall_timeout;
        let mut ids = Vec::new();
        let tx_axis = format!("{}.tx_axis", cu.name);
        let per_run = session && self.fed_by_host_started_cu(&tx_axis);
        if let Some(tx) = self.stream(&tx_axis) {
            let cu2 = cu.clone();
            let stop = self.stop_free.clone();
            let t = std::thread::spawn(move || -> Result<()> {
                loop {
                    while let Some(b) = tx.pop(timeout)? {
                        let last = b.last;
                        cu2.transmit(b)?;
                        // TLAST ends a message: the link may drain (an acknowledged
                        // benchmark message waits for its ack before the run ends)
                        if last {
                            cu2.flush_tx()?;
                        }
                    }
                    cu2.flush_tx()?;
                    if !(per_run && tx.wait_reopened(&stop)?) {
                        break;
                    }
                }
                if let Some(s) = cu2.tx_sender() {
                    s.close()?;
                }
                Ok(())
            });
            ids.push(self.add_run(&cu.name, t));
        }
        if let Some(rx) = self.stream(&format!("{}.rx_axis", cu.name)) {
            let cu2 = cu.clone();
            let t = std::thread::spawn(move || -> Result<()> {
                let mut words = 0u64;
                while let Some(b) = cu2.receive()? {
                    rx.push(b, timeout)?;
                    words += 1;
                    // a slow receiving kernel (bench --throttle-us): the RX FIFO fills
                    let pause = cu2.rx_throttle();
                    if !pause.is_zero() && words.is_multiple_of(64) {
                        std::thread::sleep(pause);
                    }
                }
                rx.close()
            });
            ids.push(self.add_run(&cu.name, t));
        }
        ids
    }

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

    /// A FINN CU: frames from its input stream through the plugged-in executor to its
    /// output stream, until the input ends.
    fn start_finn(&mut self, cu: &str) -> Result<RunId> {
        let factory = self.options.finn.clone().with_context(|| {
            format!(
                "{}: CU {cu} is a FINN partition and no FINN executor is plugged in (finn_exec)",
                self.label
            )
        })?;
        let Some(SimCu::Finn { dir }) = self.cus.get(cu) else {
            unreachable!()
        };
        let kernel = self.description()?.kernel(cu).unwrap().clone();
        let mut exec = factory.open(&kernel, dir)?;
        let input = kernel
            .ports
            .iter()
            .find(|p| p.kind == "axis" && p.dir.as_deref() == Some("in"))
            .context("FINN CU without input stream")?;
        let output = kernel
            .ports
            .iter()
            .find(|p| p.kind == "axis" && p.dir.as_deref() == Some("out"))
            .context("FINN CU without output stream")?;
        let rx = self
            .stream(&format!("{cu}.{}", input.name))
            .with_context(|| format!("{cu}.{} not connected", input.name))?;
        let tx = self
            .stream(&format!("{cu}.{}", output.name))
            .with_context(|| format!("{cu}.{} not connected", output.name))?;
        let out_bytes = (output.width / 8).max(1) as usize;
        let timeout = self.options.stall_timeout;
        let thread = std::thread::spawn(move || -> Result<()> {
            let want = exec.input_frame_bytes();
            let mut frame = Vec::with_capacity(want);
            loop {
                match rx.pop(timeout)? {
                    Some(b) => frame.extend_from_slice(&b.data),
                    None => break,
                }
                if frame.len() >= want {
                    let rest = frame.split_off(want);
                    let out = exec.run(&frame)?;
                    for chunk in out.chunks(out_bytes) {
                        let mut data = chunk.to_vec();
                        data.resize(out_bytes, 0);
                        tx.push(stream::Beat::new(data), timeout)?;
                    }
                    frame = rest;
                }
            }
            tx.close()
        });
        Ok(self.add_run(cu, thread))
    }
}

/// The width converter the link configuration records on a stream (`converter`:
/// `{from_width, to_width}` in bits), if any.
fn converter_widths(s: &xclbin::description::StreamEntry) -> Option<(u32, u32)> {
    let c = s.converter.as_ref()?;
    let bits = |k: &str| c.get(k).and_then(|v| v.as_u64()).map(|v| v as u32);
    match (bits("from_width"), bits("to_width")) {
        (Some(a), Some(b)) if a != b => Some((a, b)),
        _ => None,
    }
}

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
        xclbin::sections::bank(bank)?;
        let used: usize = self
            .buffers
            .values()
            .filter(|(b, _)| b == bank)
            .map(|(_, v)| v.lock().unwrap().len())
            .sum();
        if used + size > BANK_BYTES {
            bail!(
                "{}: {bank} has {} B free, {size} B requested",
                self.label,
                BANK_BYTES - used
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
