//! The runs of HLS CUs: their arguments through af_sim_abi.h (scalars, buffers, stream
//! ports bound to the link configuration's FIFOs), a host-started run on its own thread, and
//! a free-running CU whose body the hardware restarts for every packet.

use std::ffi::CString;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};

use super::hls::{self, AfArg, AfStream, HlsLibrary, StreamEnd};
use super::stream::StreamFifo;
use super::{SimCu, SimDevice};
use crate::{KernelArg, RunId};

/// What an HLS run holds: the arguments, the names they point into, the stream ends their
/// callbacks point at (boxed: the addresses must not move while the run lasts).
#[allow(clippy::vec_box)]
type HlsArgs = (Vec<AfArg>, Vec<CString>, Vec<Box<StreamEnd>>);

/// An HLS run's arguments on their way to the run's thread. Field 1 is never read but must
/// live as long as the run: the AfArg names point into it.
#[allow(dead_code, clippy::vec_box)]
struct RunArgs(Vec<AfArg>, Vec<CString>, Vec<Box<StreamEnd>>);
// Raw pointers into buffers and the boxed stream ends travel with the thread.
unsafe impl Send for RunArgs {}

impl SimDevice {
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
        let bundle = RunArgs(args, names, ends);
        let outputs: Vec<Arc<StreamFifo>> = lib
            .ports
            .iter()
            .filter(|p| p.kind == "axis" && p.dir == "out")
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
    pub(super) fn restarts_per_packet(&self, cu: &str) -> bool {
        let free = self
            .description()
            .ok()
            .and_then(|d| d.kernel(cu))
            .is_some_and(|k| k.control() == "ap_ctrl_none");
        let inputs = match self.cus.get(cu) {
            Some(SimCu::Hls { lib, .. }) => lib
                .ports
                .iter()
                .filter(|p| p.kind == "axis" && p.dir == "in")
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
    pub(super) fn start_free_hls(&mut self, cu: &str) -> Result<RunId> {
        let Some(SimCu::Hls { lib, .. }) = self.cus.get(cu) else {
            unreachable!("checked by the caller")
        };
        let lib = lib.clone();
        let stream_of = |dir: &str| -> Vec<Arc<StreamFifo>> {
            lib.ports
                .iter()
                .filter(|p| p.kind == "axis" && p.dir == dir)
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
        let bundle = RunArgs(args, names, ends);
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
}
