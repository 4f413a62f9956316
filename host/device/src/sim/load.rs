//! Loading a sim xclbin: its payloads unpacked into the device's work directory, one
//! simulated CU per kernel entry, the stream FIFOs of the link configuration (with their
//! width converters) and the links cabled on this device itself.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use xclbin::read::Payload;
use xclbin::KernelEntry;

use super::aurora_cu::{connect_local, AuroraCu};
use super::hls::HlsLibrary;
use super::stream::StreamFifo;
use super::{SimCu, SimDevice};

impl SimDevice {
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
                xclbin::archive::unpack_to(sim.payload_bytes(name)?, &dir)?;
                Ok(Some(dir))
            }
        }
    }

    pub(super) fn build_cus(&mut self) -> Result<()> {
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
}

/// The width converter the link configuration records on a stream (`converter`:
/// `{from_width, to_width}` in bits), if any.
fn converter_widths(s: &xclbin::description::StreamEntry) -> Option<(u32, u32)> {
    let c = s.converter?;
    let bits = |w: u64| u32::try_from(w).ok();
    match (bits(c.from_width), bits(c.to_width)) {
        (Some(a), Some(b)) if a != b => Some((a, b)),
        _ => None,
    }
}
