//! Host API of the AuroraFlow link kernel (the public kernel's `AuroraFlow.hpp`, in Rust),
//! over any register access path: XRT's `xrt::ip` on a card, or a simulated CU.

pub mod api;
pub mod decode;

pub use api::{AuroraFlow, Counters, Registers};
pub use decode::{Configuration, CoreStatus, FifoStatus, FifoThresholds};

/// A bit range `[hi:lo]` of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub hi: u32,
    pub lo: u32,
}

impl Field {
    pub const fn mask(self) -> u32 {
        let width = self.hi - self.lo + 1;
        let ones = if width == 32 {
            u32::MAX
        } else {
            (1u32 << width) - 1
        };
        ones << self.lo
    }

    pub const fn get(self, value: u32) -> u32 {
        (value & self.mask()) >> self.lo
    }

    pub const fn put(self, value: u32, field: u32) -> u32 {
        (value & !self.mask()) | ((field << self.lo) & self.mask())
    }
}

/// One register of the AXI4-Lite map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    pub offset: u32,
    pub writable: bool,
}

/// The register map, generated from hw/aurora_flow/kernel.toml (see build.rs).
#[allow(clippy::unreadable_literal)]
pub mod regs {
    pub use crate::{Field, Register};
    include!(concat!(env!("OUT_DIR"), "/registers.rs"));

    pub fn by_name(name: &str) -> Option<&'static Register> {
        REGISTERS.iter().find(|r| r.name == name)
    }

    pub fn parameter_default(attr: &str) -> Option<i64> {
        PARAMETER_DEFAULTS
            .iter()
            .find(|(a, _)| *a == attr)
            .map(|(_, v)| *v)
    }
}
