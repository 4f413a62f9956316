//! The bytes of every benchmark message: a pattern of the sending port and the message's
//! number, so the receiver knows what must have arrived without being told.

/// The pattern's seed of the sending port `port` of `device` (FNV-1a over the name).
pub(super) fn seed(device: &str, port: u32) -> u32 {
    device.bytes().fold(2166136261u32 ^ port, |h, b| {
        (h ^ b as u32).wrapping_mul(16777619)
    })
}

fn pattern(seed: u32, message: u64, index: usize) -> u8 {
    ((index as u32).wrapping_mul(2654435761) ^ seed ^ (message as u32).wrapping_mul(40503)) as u8
}

/// Message number `message` of `size` bytes from the port of `seed`.
pub(super) fn message_bytes(seed: u32, message: u64, size: usize) -> Vec<u8> {
    (0..size).map(|i| pattern(seed, message, i)).collect()
}
