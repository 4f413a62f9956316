//! The link pumps of the AuroraFlow CUs: threads that move words between a CU's stream
//! FIFOs (`tx_axis`, `rx_axis`) and its emulated links.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Result;

use super::aurora_cu::AuroraCu;
use super::SimDevice;
use crate::RunId;

impl SimDevice {
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
    pub(super) fn start_pumps_of(&mut self, cu: &Arc<AuroraCu>, session: bool) -> Vec<RunId> {
        let timeout = self.options.stall_timeout;
        let mut ids = Vec::new();
        let tx_axis = format!("{}.tx_axis", cu.name);
        let per_run = session && self.fed_by_host_started_cu(&tx_axis);
        if let Some(tx) = self.stream(&tx_axis) {
            let cu2 = cu.clone();
            let stop = self.stop_free.clone();
            let t = std::thread::spawn(move || -> Result<()> {
                loop {
                    // A host-started producer's stream is idle until the host starts it
                    // (a host program may never use this direction): not a stall; the end
                    // of the session (`end_free_running`) ends the wait.
                    if per_run && !tx.wait_beat(&stop)? && stop.load(Ordering::SeqCst) {
                        break;
                    }
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
}
