//! The AuroraFlow object: status, configuration, counters, resets.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::decode::{Configuration, CoreStatus, FifoStatus, FifoThresholds};
use crate::regs;

/// 32-bit access to one CU's AXI4-Lite map, by byte offset.
pub trait Registers {
    fn read32(&self, offset: u32) -> Result<u32>;
    fn write32(&self, offset: u32, value: u32) -> Result<()>;
}

impl<R: Registers + ?Sized> Registers for &R {
    fn read32(&self, offset: u32) -> Result<u32> {
        (**self).read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) -> Result<()> {
        (**self).write32(offset, value)
    }
}

impl<R: Registers + ?Sized> Registers for Box<R> {
    fn read32(&self, offset: u32) -> Result<u32> {
        (**self).read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) -> Result<()> {
        (**self).write32(offset, value)
    }
}

/// Every counter register, read in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    pub status_not_ok: u32,
    pub fifo_rx_overflow: u32,
    pub fifo_tx_overflow: u32,
    pub nfc_full_trigger: u32,
    pub nfc_empty_trigger: u32,
    pub nfc_latency: u32,
    pub tx_count: u32,
    pub rx_count: u32,
    pub gt_not_ready: [u32; 4],
    pub line_down: [u32; 4],
    pub pll_not_locked: u32,
    pub mmcm_not_locked: u32,
    pub hard_err: u32,
    pub soft_err: u32,
    pub channel_down: u32,
    pub frames_received: u32,
    pub frames_with_errors: u32,
    /// not in the public kernel: frame ends at which the receive assembly restarted after a
    /// soft error (kernel.toml RX_REALIGN_COUNT)
    pub rx_realign: u32,
    /// not in the public kernel: 1 while a plain 64 B stream's receive assembly holds an
    /// unpaired 32 B half (after an odd number of lost blocks; kernel.toml RX_PENDING_HALF)
    pub rx_pending_half: u32,
}

impl Counters {
    /// (register name, value) for printing and CSV.
    pub fn named(&self) -> Vec<(&'static str, u32)> {
        vec![
            ("STATUS_NOT_OK_COUNT", self.status_not_ok),
            ("FIFO_RX_OVERFLOW_COUNT", self.fifo_rx_overflow),
            ("FIFO_TX_OVERFLOW_COUNT", self.fifo_tx_overflow),
            ("NFC_FULL_TRIGGER_COUNT", self.nfc_full_trigger),
            ("NFC_EMPTY_TRIGGER_COUNT", self.nfc_empty_trigger),
            ("NFC_LATENCY_COUNT", self.nfc_latency),
            ("TX_COUNT", self.tx_count),
            ("RX_COUNT", self.rx_count),
            ("GT_NOT_READY_0_COUNT", self.gt_not_ready[0]),
            ("GT_NOT_READY_1_COUNT", self.gt_not_ready[1]),
            ("GT_NOT_READY_2_COUNT", self.gt_not_ready[2]),
            ("GT_NOT_READY_3_COUNT", self.gt_not_ready[3]),
            ("LINE_DOWN_0_COUNT", self.line_down[0]),
            ("LINE_DOWN_1_COUNT", self.line_down[1]),
            ("LINE_DOWN_2_COUNT", self.line_down[2]),
            ("LINE_DOWN_3_COUNT", self.line_down[3]),
            ("PLL_NOT_LOCKED_COUNT", self.pll_not_locked),
            ("MMCM_NOT_LOCKED_COUNT", self.mmcm_not_locked),
            ("HARD_ERR_COUNT", self.hard_err),
            ("SOFT_ERR_COUNT", self.soft_err),
            ("CHANNEL_DOWN_COUNT", self.channel_down),
            ("FRAMES_RECEIVED", self.frames_received),
            ("FRAMES_WITH_ERRORS", self.frames_with_errors),
            ("RX_REALIGN_COUNT", self.rx_realign),
            ("RX_PENDING_HALF", self.rx_pending_half),
        ]
    }
}

/// One AuroraFlow CU (`aurora_flow_<instance>`).
pub struct AuroraFlow<R: Registers> {
    pub name: String,
    regs: R,
}

impl<R: Registers> AuroraFlow<R> {
    pub fn new(name: impl Into<String>, regs: R) -> Self {
        AuroraFlow {
            name: name.into(),
            regs,
        }
    }

    /// The CU name of QSFP port `instance` (the public host code opens exactly this name).
    pub fn cu_name(instance: u32) -> String {
        format!("aurora_flow_{instance}")
    }

    pub fn registers(&self) -> &R {
        &self.regs
    }

    pub fn core_status(&self) -> Result<CoreStatus> {
        Ok(CoreStatus::decode(self.regs.read32(regs::CORE_STATUS)?))
    }

    /// Polls CORE_STATUS until it reads CORE_STATUS_OK or `timeout` passes; Ok(false) on
    /// timeout, like the public `core_status_ok(timeout_ms)`.
    pub fn core_status_ok(&self, timeout: Duration) -> Result<bool> {
        let start = Instant::now();
        loop {
            if self.core_status()?.ok() {
                return Ok(true);
            }
            if start.elapsed() >= timeout {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn configuration(&self) -> Result<Configuration> {
        Ok(Configuration::decode(
            self.regs.read32(regs::CONFIGURATION)?,
        ))
    }

    pub fn has_framing(&self) -> Result<bool> {
        Ok(self.configuration()?.has_tlast)
    }

    pub fn fifo_thresholds(&self) -> Result<FifoThresholds> {
        Ok(FifoThresholds::decode(
            self.regs.read32(regs::FIFO_THRESHOLDS)?,
        ))
    }

    pub fn fifo_status(&self) -> Result<FifoStatus> {
        Ok(FifoStatus::decode(self.regs.read32(regs::FIFO_STATUS)?))
    }

    pub fn counters(&self) -> Result<Counters> {
        let r = |off| self.regs.read32(off);
        Ok(Counters {
            status_not_ok: r(regs::STATUS_NOT_OK_COUNT)?,
            fifo_rx_overflow: r(regs::FIFO_RX_OVERFLOW_COUNT)?,
            fifo_tx_overflow: r(regs::FIFO_TX_OVERFLOW_COUNT)?,
            nfc_full_trigger: r(regs::NFC_FULL_TRIGGER_COUNT)?,
            nfc_empty_trigger: r(regs::NFC_EMPTY_TRIGGER_COUNT)?,
            nfc_latency: r(regs::NFC_LATENCY_COUNT)?,
            tx_count: r(regs::TX_COUNT)?,
            rx_count: r(regs::RX_COUNT)?,
            gt_not_ready: [
                r(regs::GT_NOT_READY_0_COUNT)?,
                r(regs::GT_NOT_READY_1_COUNT)?,
                r(regs::GT_NOT_READY_2_COUNT)?,
                r(regs::GT_NOT_READY_3_COUNT)?,
            ],
            line_down: [
                r(regs::LINE_DOWN_0_COUNT)?,
                r(regs::LINE_DOWN_1_COUNT)?,
                r(regs::LINE_DOWN_2_COUNT)?,
                r(regs::LINE_DOWN_3_COUNT)?,
            ],
            pll_not_locked: r(regs::PLL_NOT_LOCKED_COUNT)?,
            mmcm_not_locked: r(regs::MMCM_NOT_LOCKED_COUNT)?,
            hard_err: r(regs::HARD_ERR_COUNT)?,
            soft_err: r(regs::SOFT_ERR_COUNT)?,
            channel_down: r(regs::CHANNEL_DOWN_COUNT)?,
            frames_received: r(regs::FRAMES_RECEIVED)?,
            frames_with_errors: r(regs::FRAMES_WITH_ERRORS)?,
            rx_realign: r(regs::RX_REALIGN_COUNT)?,
            rx_pending_half: r(regs::RX_PENDING_HALF)?,
        })
    }

    /// Soft reset of the core and FIFOs: CORE_RESET 1 then 0 (level-sensitive).
    pub fn reset_core(&self) -> Result<()> {
        self.regs.write32(regs::CORE_RESET, 1)?;
        self.regs.write32(regs::CORE_RESET, 0)
    }

    /// Zeroes every counter: COUNTER_RESET 1 then 0.
    pub fn reset_counters(&self) -> Result<()> {
        self.regs.write32(regs::COUNTER_RESET, 1)?;
        self.regs.write32(regs::COUNTER_RESET, 0)
    }
}
