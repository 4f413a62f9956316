//! Decoded CORE_STATUS, CONFIGURATION, FIFO_THRESHOLDS and FIFO_STATUS.

use std::fmt;

use crate::regs::{
    configuration as cfg, core_status as cs, fifo_status as fs, fifo_thresholds as ft,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreStatus {
    pub raw: u32,
    pub gt_powergood: u32,
    pub lane_up: u32,
    pub pll_lock: bool,
    pub mmcm_not_locked: bool,
    pub hard_err: bool,
    pub soft_err: bool,
    pub channel_up: bool,
}

impl CoreStatus {
    pub fn decode(raw: u32) -> CoreStatus {
        CoreStatus {
            raw,
            gt_powergood: cs::GT_POWERGOOD.get(raw),
            lane_up: cs::LANE_UP.get(raw),
            pll_lock: cs::PLL_LOCK.get(raw) != 0,
            mmcm_not_locked: cs::MMCM_NOT_LOCKED.get(raw) != 0,
            hard_err: cs::HARD_ERR.get(raw) != 0,
            soft_err: cs::SOFT_ERR.get(raw) != 0,
            channel_up: cs::CHANNEL_UP.get(raw) != 0,
        }
    }

    pub fn ok(&self) -> bool {
        self.raw == crate::regs::CORE_STATUS_OK
    }
}

impl fmt::Display for CoreStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#06x} (gt_powergood {:#x}, lane_up {:#x}, pll_lock {}, mmcm_not_locked {}, hard_err {}, soft_err {}, channel_up {})",
            self.raw,
            self.gt_powergood,
            self.lane_up,
            self.pll_lock as u8,
            self.mmcm_not_locked as u8,
            self.hard_err as u8,
            self.soft_err as u8,
            self.channel_up as u8
        )
    }
}

/// The receive equaliser mode values of kernel.toml's RX_EQ_MODE parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxEqMode {
    Auto,
    Lpm,
    Dfe,
    Unknown(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Configuration {
    pub raw: u32,
    pub has_tkeep: bool,
    pub has_tlast: bool,
    /// Bytes per user-stream beat (32 or 64).
    pub fifo_width: u32,
    /// RX FIFO depth in words.
    pub rx_fifo_depth: u32,
    pub rx_eq_mode: RxEqMode,
    pub ins_loss_nyq: u32,
}

impl Configuration {
    pub fn decode(raw: u32) -> Configuration {
        Configuration {
            raw,
            has_tkeep: cfg::HAS_TKEEP.get(raw) != 0,
            has_tlast: cfg::HAS_TLAST.get(raw) != 0,
            fifo_width: cfg::FIFO_WIDTH.get(raw),
            rx_fifo_depth: 1 << cfg::RX_FIFO_DEPTH_LOG2.get(raw),
            rx_eq_mode: match cfg::RX_EQ_MODE.get(raw) {
                0 => RxEqMode::Auto,
                1 => RxEqMode::Lpm,
                2 => RxEqMode::Dfe,
                v => RxEqMode::Unknown(v),
            },
            ins_loss_nyq: cfg::INS_LOSS_NYQ.get(raw),
        }
    }

    /// The register value a kernel with these parameters reports.
    pub fn encode(
        has_framing: bool,
        fifo_width: u32,
        rx_fifo_depth: u32,
        rx_eq_mode: u32,
        ins_loss_nyq: u32,
    ) -> u32 {
        let mut v = 0;
        v = cfg::HAS_TKEEP.put(v, has_framing as u32);
        v = cfg::HAS_TLAST.put(v, has_framing as u32);
        v = cfg::FIFO_WIDTH.put(v, fifo_width);
        v = cfg::RX_FIFO_DEPTH_LOG2.put(v, rx_fifo_depth.trailing_zeros());
        v = cfg::RX_EQ_MODE.put(v, rx_eq_mode);
        cfg::INS_LOSS_NYQ.put(v, ins_loss_nyq)
    }
}

impl fmt::Display for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x} (framing {}, width {} B, RX FIFO {} words, RX_EQ_MODE {:?}, INS_LOSS_NYQ {} dB)",
            self.raw,
            self.has_tlast as u8,
            self.fifo_width,
            self.rx_fifo_depth,
            self.rx_eq_mode,
            self.ins_loss_nyq
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FifoThresholds {
    pub prog_full: u32,
    pub prog_empty: u32,
}

impl FifoThresholds {
    pub fn decode(raw: u32) -> FifoThresholds {
        FifoThresholds {
            prog_full: ft::PROG_FULL.get(raw),
            prog_empty: ft::PROG_EMPTY.get(raw),
        }
    }

    pub fn encode(&self) -> u32 {
        ft::PROG_EMPTY.put(ft::PROG_FULL.put(0, self.prog_full), self.prog_empty)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FifoStatus {
    pub tx_prog_empty: bool,
    pub tx_almost_empty: bool,
    pub tx_prog_full: bool,
    pub tx_almost_full: bool,
    pub rx_prog_empty: bool,
    pub rx_almost_empty: bool,
    pub rx_prog_full: bool,
    pub rx_almost_full: bool,
}

impl FifoStatus {
    pub fn decode(raw: u32) -> FifoStatus {
        FifoStatus {
            tx_prog_empty: fs::TX_PROG_EMPTY.get(raw) != 0,
            tx_almost_empty: fs::TX_ALMOST_EMPTY.get(raw) != 0,
            tx_prog_full: fs::TX_PROG_FULL.get(raw) != 0,
            tx_almost_full: fs::TX_ALMOST_FULL.get(raw) != 0,
            rx_prog_empty: fs::RX_PROG_EMPTY.get(raw) != 0,
            rx_almost_empty: fs::RX_ALMOST_EMPTY.get(raw) != 0,
            rx_prog_full: fs::RX_PROG_FULL.get(raw) != 0,
            rx_almost_full: fs::RX_ALMOST_FULL.get(raw) != 0,
        }
    }

    pub fn encode(&self) -> u32 {
        let bits = [
            (fs::TX_PROG_EMPTY, self.tx_prog_empty),
            (fs::TX_ALMOST_EMPTY, self.tx_almost_empty),
            (fs::TX_PROG_FULL, self.tx_prog_full),
            (fs::TX_ALMOST_FULL, self.tx_almost_full),
            (fs::RX_PROG_EMPTY, self.rx_prog_empty),
            (fs::RX_ALMOST_EMPTY, self.rx_almost_empty),
            (fs::RX_PROG_FULL, self.rx_prog_full),
            (fs::RX_ALMOST_FULL, self.rx_almost_full),
        ];
        bits.iter().fold(0, |v, (f, b)| f.put(v, *b as u32))
    }
}
