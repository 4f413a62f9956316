//! A simulated AuroraFlow CU: the kernel's AXI4-Lite map (offsets from kernel.toml via the
//! `aurora` crate) over the emulated links into and out of it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Result};
use aurora::decode::{Configuration, FifoStatus, FifoThresholds};
use aurora::regs;
use serde_json::{Map, Value};

use super::link::{AuroraLink, LinkParams};
use super::stream::Beat;

/// Where a CU's transmitted words go: the peer's link model, here or on another rank.
pub trait LinkSender: Send + Sync {
    fn send(&self, beat: Beat) -> Result<()>;
    fn close(&self) -> Result<()>;
    /// Pushes out words a transport batches (end of a message).
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    /// The model itself when the receiver is in this process (TX FIFO status visible).
    fn local(&self) -> Option<&AuroraLink> {
        None
    }
}

impl LinkSender for AuroraLink {
    fn send(&self, beat: Beat) -> Result<()> {
        AuroraLink::send(self, beat)
    }
    fn close(&self) -> Result<()> {
        self.close_sender();
        Ok(())
    }
    fn flush(&self) -> Result<()> {
        self.flush_sender();
        Ok(())
    }
    fn local(&self) -> Option<&AuroraLink> {
        Some(self)
    }
}

pub struct AuroraCu {
    pub name: String,
    /// QSFP port (the kernel's `instance`).
    pub port: u32,
    pub params: LinkParams,
    pub framing: bool,
    rx_eq_mode: u32,
    ins_loss_nyq: u32,
    rx: Mutex<Option<Arc<AuroraLink>>>,
    tx: Mutex<Option<Arc<dyn LinkSender>>>,
    tx_count: AtomicU32,
    frames_received: AtomicU32,
    core_reset: AtomicU32,
    counter_reset: AtomicU32,
    /// Pause of the receiving kernel after every 64 words, microseconds (0: none).
    rx_throttle_us: AtomicU64,
}

impl AuroraCu {
    pub fn new(
        name: &str,
        params_json: &Map<String, Value>,
        cable_m: f64,
        channel_cycles: Option<u64>,
    ) -> Result<AuroraCu> {
        let params = LinkParams::from_kernel(params_json, cable_m, channel_cycles)
            .map_err(|e| anyhow::anyhow!("CU {name}: {e}"))?;
        let port = params_json
            .get("instance")
            .and_then(|v| v.as_u64())
            .or_else(|| name.rsplit('_').next().and_then(|s| s.parse().ok()))
            .unwrap_or(0) as u32;
        let framing = params_json
            .get("use_framing")
            .map(|v| v.as_bool().unwrap_or(v.as_i64() == Some(1)))
            .unwrap_or(false);
        let rx_eq_mode = match params_json.get("rx_eq_mode").and_then(|v| v.as_str()) {
            Some("AUTO") => 0,
            Some("DFE") => 2,
            _ => 1,
        };
        let ins_loss_nyq = params_json
            .get("ins_loss_nyq")
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| regs::parameter_default("ins_loss_nyq").unwrap_or(8) as u64)
            as u32;
        Ok(AuroraCu {
            name: name.to_string(),
            port,
            params,
            framing,
            rx_eq_mode,
            ins_loss_nyq,
            rx: Mutex::new(None),
            tx: Mutex::new(None),
            tx_count: AtomicU32::new(0),
            frames_received: AtomicU32::new(0),
            core_reset: AtomicU32::new(0),
            counter_reset: AtomicU32::new(0),
            rx_throttle_us: AtomicU64::new(0),
        })
    }

    /// The model of the link INTO this CU (owned here: the RX FIFO is this CU's).
    pub fn attach_rx(&self, link: Arc<AuroraLink>) {
        *self.rx.lock().unwrap() = Some(link);
    }

    pub fn attach_tx(&self, sender: Arc<dyn LinkSender>) {
        *self.tx.lock().unwrap() = Some(sender);
    }

    pub fn rx_link(&self) -> Option<Arc<AuroraLink>> {
        self.rx.lock().unwrap().clone()
    }

    pub fn tx_sender(&self) -> Option<Arc<dyn LinkSender>> {
        self.tx.lock().unwrap().clone()
    }

    /// tx_axis handshake: counted here, then carried by the link.
    pub fn transmit(&self, beat: Beat) -> Result<()> {
        let tx = self.tx_sender().ok_or_else(|| {
            anyhow::anyhow!(
                "CU {}: port {} has no link attached (check the topology)",
                self.name,
                self.port
            )
        })?;
        // counted at the handshake, before the word can reach the peer: a TX_COUNT read
        // once the receiver has the word includes it
        self.tx_count.fetch_add(1, Ordering::Relaxed);
        tx.send(beat)
    }

    /// Ends a message on a batching transport.
    pub fn flush_tx(&self) -> Result<()> {
        match self.tx_sender() {
            Some(t) => t.flush(),
            None => Ok(()),
        }
    }

    /// rx_axis handshake.
    pub fn receive(&self) -> Result<Option<Beat>> {
        let rx = self.rx_link().ok_or_else(|| {
            anyhow::anyhow!(
                "CU {}: port {} has no link attached (check the topology)",
                self.name,
                self.port
            )
        })?;
        let b = rx.recv()?;
        if let Some(b) = &b {
            if self.framing && b.last {
                self.frames_received.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(b)
    }

    /// Makes the kernel reading `rx_axis` slow: it pauses `pause` after every 64 words
    /// (bench --throttle-us), so the RX FIFO fills and flow control fires.
    pub fn set_rx_throttle(&self, pause: std::time::Duration) {
        self.rx_throttle_us
            .store(pause.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn rx_throttle(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.rx_throttle_us.load(Ordering::Relaxed))
    }

    fn link_up(&self) -> bool {
        let rx_ok = self.rx_link().is_some_and(|l| l.failure().is_none());
        rx_ok && self.tx_sender().is_some() && self.core_reset.load(Ordering::Relaxed) == 0
    }

    pub fn read32(&self, offset: u32) -> Result<u32> {
        if !offset.is_multiple_of(4) || offset >= regs::AXILITE_RANGE {
            bail!(
                "CU {}: register offset {offset:#x} is not a 32-bit register of the {:#x}-byte map",
                self.name,
                regs::AXILITE_RANGE
            );
        }
        let rx = self.rx_link();
        let c = rx.as_ref().map(|l| l.counters()).unwrap_or_default();
        let tx_local = self.tx_sender();
        let tx_model = tx_local.as_ref().and_then(|t| {
            t.local()
                .map(|l| (l.occupancy().tx, l.counters().tx_almost_full_edges))
        });
        let p = &self.params;
        Ok(match offset {
            regs::CORE_RESET => self.core_reset.load(Ordering::Relaxed),
            regs::COUNTER_RESET => self.counter_reset.load(Ordering::Relaxed),
            regs::CONFIGURATION => Configuration::encode(
                self.framing,
                p.fifo_width,
                p.rx_depth,
                self.rx_eq_mode,
                self.ins_loss_nyq,
            ),
            regs::FIFO_THRESHOLDS => FifoThresholds {
                prog_full: p.prog_full,
                prog_empty: p.prog_empty,
            }
            .encode(),
            // Up: every lane powered and up, PLL locked, channel up. Down: powered, locked.
            regs::CORE_STATUS if self.link_up() => regs::CORE_STATUS_OK,
            regs::CORE_STATUS => 0x10f,
            regs::FIFO_STATUS => {
                let rx_occ = rx.as_ref().map(|l| l.occupancy().rx).unwrap_or(0);
                let tx_occ = tx_model.map(|(o, _)| o).unwrap_or(0);
                FifoStatus {
                    tx_prog_empty: tx_occ <= p.tx_depth / 4,
                    tx_almost_empty: tx_occ <= 1,
                    tx_prog_full: tx_occ >= p.tx_depth * 3 / 4,
                    tx_almost_full: tx_occ + 1 >= p.tx_depth,
                    rx_prog_empty: rx_occ <= p.prog_empty,
                    rx_almost_empty: rx_occ <= 1,
                    rx_prog_full: rx_occ >= p.prog_full,
                    rx_almost_full: rx_occ + 1 >= p.rx_depth,
                }
                .encode()
            }
            regs::FIFO_RX_OVERFLOW_COUNT => c.rx_overflow,
            regs::FIFO_TX_OVERFLOW_COUNT => tx_model.map(|(_, e)| e).unwrap_or(0),
            regs::NFC_FULL_TRIGGER_COUNT => c.xoff_sent,
            regs::NFC_EMPTY_TRIGGER_COUNT => c.xon_sent,
            regs::NFC_LATENCY_COUNT => c.max_in_flight,
            regs::TX_COUNT => self.tx_count.load(Ordering::Relaxed),
            regs::RX_COUNT => c.rx_words,
            regs::FRAMES_RECEIVED => self.frames_received.load(Ordering::Relaxed),
            // Lane faults, PLL/MMCM, hard/soft errors, channel down and CRC errors are not
            // modelled by the emulated link: their counters read 0.
            _ => 0,
        })
    }

    pub fn write32(&self, offset: u32, value: u32) -> Result<()> {
        match offset {
            regs::CORE_RESET => {
                let was = self.core_reset.swap(value & 1, Ordering::Relaxed);
                if was == 0 && value & 1 == 1 {
                    if let Some(l) = self.rx_link() {
                        l.reset_core();
                    }
                }
            }
            regs::COUNTER_RESET => {
                self.counter_reset.store(value & 1, Ordering::Relaxed);
                if value & 1 == 1 {
                    if let Some(l) = self.rx_link() {
                        l.reset_counters();
                    }
                    self.tx_count.store(0, Ordering::Relaxed);
                    self.frames_received.store(0, Ordering::Relaxed);
                }
            }
            other => bail!("CU {}: register {other:#x} is read-only", self.name),
        }
        Ok(())
    }
}

impl aurora::Registers for AuroraCu {
    fn read32(&self, offset: u32) -> Result<u32> {
        AuroraCu::read32(self, offset)
    }
    fn write32(&self, offset: u32, value: u32) -> Result<()> {
        AuroraCu::write32(self, offset, value)
    }
}

/// Joins `a`'s TX to `b`'s RX and `b`'s TX to `a`'s RX (both CUs in this process).
pub fn connect_local(a: &AuroraCu, b: &AuroraCu, device_a: &str, device_b: &str) {
    let ab = Arc::new(AuroraLink::new(
        format!("{device_a}:{} -> {device_b}:{}", a.port, b.port),
        b.params.clone(),
    ));
    let ba = Arc::new(AuroraLink::new(
        format!("{device_b}:{} -> {device_a}:{}", b.port, a.port),
        a.params.clone(),
    ));
    b.attach_rx(ab.clone());
    a.attach_tx(ab);
    a.attach_rx(ba.clone());
    b.attach_tx(ba);
}
