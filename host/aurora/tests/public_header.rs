//! The generated register map and decoders against the public AuroraFlow host header
//! (pc2/AuroraFlow @957c8bb6, include/AuroraFlow.hpp and rtl/aurora_flow_control_s_axi.v):
//! its offsets, CORE_STATUS_OK and configuration masks are typed here from that source.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use aurora::{regs, AuroraFlow, Registers};

/// Offsets of the public kernel's register map.
const PUBLIC_OFFSETS: &[(&str, u32)] = &[
    ("CORE_RESET", 0x10),
    ("COUNTER_RESET", 0x14),
    ("CONFIGURATION", 0x18),
    ("FIFO_THRESHOLDS", 0x1c),
    ("CORE_STATUS", 0x20),
    ("STATUS_NOT_OK_COUNT", 0x24),
    ("FIFO_STATUS", 0x28),
    ("FIFO_RX_OVERFLOW_COUNT", 0x2c),
    ("FIFO_TX_OVERFLOW_COUNT", 0x30),
    ("NFC_FULL_TRIGGER_COUNT", 0x34),
    ("NFC_EMPTY_TRIGGER_COUNT", 0x38),
    ("NFC_LATENCY_COUNT", 0x3c),
    ("TX_COUNT", 0x40),
    ("RX_COUNT", 0x44),
    ("GT_NOT_READY_0_COUNT", 0x48),
    ("GT_NOT_READY_1_COUNT", 0x4c),
    ("GT_NOT_READY_2_COUNT", 0x50),
    ("GT_NOT_READY_3_COUNT", 0x54),
    ("LINE_DOWN_0_COUNT", 0x58),
    ("LINE_DOWN_1_COUNT", 0x5c),
    ("LINE_DOWN_2_COUNT", 0x60),
    ("LINE_DOWN_3_COUNT", 0x64),
    ("PLL_NOT_LOCKED_COUNT", 0x68),
    ("MMCM_NOT_LOCKED_COUNT", 0x6c),
    ("HARD_ERR_COUNT", 0x70),
    ("SOFT_ERR_COUNT", 0x74),
    ("CHANNEL_DOWN_COUNT", 0x78),
    ("FRAMES_RECEIVED", 0x7c),
    ("FRAMES_WITH_ERRORS", 0x80),
];

/// Registers this kernel adds after the public map (kernel.toml), none of them in its range.
const ADDED: &[(&str, u32)] = &[("RX_REALIGN_COUNT", 0x84), ("RX_PENDING_HALF", 0x88)];

#[test]
fn offsets_match_the_public_kernel() {
    assert_eq!(regs::REGISTERS.len(), PUBLIC_OFFSETS.len() + ADDED.len());
    for (name, offset) in PUBLIC_OFFSETS.iter().chain(ADDED) {
        let r = regs::by_name(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(r.offset, *offset, "{name}");
    }
    let last_public = PUBLIC_OFFSETS.iter().map(|(_, o)| *o).max().unwrap();
    assert!(ADDED.iter().all(|(_, o)| *o > last_public));
    assert_eq!(regs::CORE_STATUS_OK, 0x11ff);
}

#[test]
fn configuration_decodes_like_the_header_masks() {
    // The header: HAS_TKEEP 0x1, HAS_TLAST 0x2, FIFO_WIDTH 0x7fc >> 2, FIFO_DEPTH 0x7800 >> 11
    // (log2), RX_EQ_MODE 0x18000 >> 15, INS_LOSS_NYQ 0x3e0000 >> 17.
    for raw in [
        0u32,
        0x3f_ffff,
        0x12345,
        0x0011_5903,
        0x2a_5a5a,
        0xdead_beef,
    ] {
        let c = aurora::Configuration::decode(raw);
        assert_eq!(c.has_tkeep, raw & 0x1 != 0);
        assert_eq!(c.has_tlast, raw & 0x2 != 0);
        assert_eq!(c.fifo_width, (raw & 0x7fc) >> 2);
        assert_eq!(c.rx_fifo_depth, 1 << ((raw & 0x7800) >> 11));
        assert_eq!(c.ins_loss_nyq, (raw & 0x3e0000) >> 17);
        let eq = (raw & 0x18000) >> 15;
        let expect = match eq {
            0 => aurora::decode::RxEqMode::Auto,
            1 => aurora::decode::RxEqMode::Lpm,
            2 => aurora::decode::RxEqMode::Dfe,
            v => aurora::decode::RxEqMode::Unknown(v),
        };
        assert_eq!(c.rx_eq_mode, expect);
    }
    // Streaming, 64 B, 1024 words, LPM, 8 dB (the public defaults).
    let v = aurora::Configuration::encode(false, 64, 1024, 1, 8);
    assert_eq!(v, (64 << 2) | (10 << 11) | (1 << 15) | (8 << 17));
}

#[test]
fn core_status_bits_follow_the_public_layout() {
    // [3:0] gt_powergood, [7:4] lane_up, [8] pll_lock, [9] mmcm_not_locked, [10] hard_err,
    // [11] soft_err, [12] channel_up.
    let s = aurora::CoreStatus::decode(0x11ff);
    assert!(s.ok() && s.channel_up && s.pll_lock && !s.hard_err);
    assert_eq!((s.gt_powergood, s.lane_up), (0xf, 0xf));
    let s = aurora::CoreStatus::decode(0x0e3f);
    assert_eq!((s.gt_powergood, s.lane_up), (0xf, 0x3));
    assert!(
        !s.pll_lock && s.mmcm_not_locked && s.hard_err && s.soft_err && !s.channel_up && !s.ok()
    );
    let f = aurora::FifoStatus::decode(0b0101_0001);
    assert!(f.tx_prog_empty && f.rx_prog_empty && f.rx_prog_full && !f.rx_almost_full);
    assert_eq!(f.encode(), 0b0101_0001);
}

/// A register file that records writes, standing in for a CU.
struct Fake {
    values: RefCell<BTreeMap<u32, u32>>,
    writes: RefCell<Vec<(u32, u32)>>,
}

impl Registers for Fake {
    fn read32(&self, offset: u32) -> anyhow::Result<u32> {
        Ok(*self.values.borrow().get(&offset).unwrap_or(&0))
    }
    fn write32(&self, offset: u32, value: u32) -> anyhow::Result<()> {
        self.writes.borrow_mut().push((offset, value));
        Ok(())
    }
}

#[test]
fn api_reads_counters_and_pulses_resets() {
    let values = PUBLIC_OFFSETS
        .iter()
        .map(|(_, off)| (*off, 1000 + off))
        .chain(ADDED.iter().map(|(_, off)| (*off, 1000 + off)))
        .chain([(0x20, 0x11ff)])
        .collect();
    let fake = Fake {
        values: RefCell::new(values),
        writes: RefCell::new(vec![]),
    };
    let af = AuroraFlow::new("aurora_flow_0", &fake);
    assert!(af.core_status_ok(Duration::from_millis(10)).unwrap());
    let c = af.counters().unwrap();
    assert_eq!(c.nfc_full_trigger, 1000 + 0x34);
    assert_eq!(c.nfc_latency, 1000 + 0x3c);
    assert_eq!(c.gt_not_ready[3], 1000 + 0x54);
    assert_eq!(c.frames_with_errors, 1000 + 0x80);
    assert_eq!(c.rx_realign, 1000 + 0x84);
    af.reset_counters().unwrap();
    af.reset_core().unwrap();
    assert_eq!(
        *fake.writes.borrow(),
        vec![(0x14, 1), (0x14, 0), (0x10, 1), (0x10, 0)]
    );
    fake.values.borrow_mut().insert(0x20, 0x10ff);
    let t = std::time::Instant::now();
    assert!(!af.core_status_ok(Duration::from_millis(30)).unwrap());
    assert!(t.elapsed() >= Duration::from_millis(30) && t.elapsed() < Duration::from_secs(2));
}
