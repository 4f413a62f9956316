//! The runs of FINN CUs: frames from the CU's input stream through the plugged-in executor
//! (`finn::FinnFactory`) to its output stream.

use anyhow::{Context, Result};

use super::stream;
use super::{SimCu, SimDevice};
use crate::RunId;

impl SimDevice {
    /// A FINN CU: frames from its input stream through the plugged-in executor to its
    /// output stream, until the input ends.
    pub(super) fn start_finn(&mut self, cu: &str) -> Result<RunId> {
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
            .find(|p| p.kind == "axis" && p.dir == "in")
            .context("FINN CU without input stream")?;
        let output = kernel
            .ports
            .iter()
            .find(|p| p.kind == "axis" && p.dir == "out")
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
