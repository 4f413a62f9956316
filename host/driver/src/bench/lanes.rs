//! The lanes of a run: each cabled AuroraFlow CU of this device with AuroraFlow's `send` and
//! `recv` kernels on its streams and their buffers in the banks the link configuration names.

use anyhow::{bail, Context, Result};
use fpga_device::{BufferId, Device};
use xclbin::DeviceDescription;

use super::peer_of;
use crate::link_config::{aurora_cus, bank, stream_peer};
use crate::ring;

/// One cabled AuroraFlow CU with the benchmark kernels on its streams and their buffers.
pub(super) struct Lane {
    /// The AuroraFlow CU and its QSFP port.
    pub cu: String,
    pub port: u32,
    pub send: String,
    pub recv: String,
    pub send_buf: BufferId,
    pub recv_buf: BufferId,
    /// Whose pattern recv must hold: the sending port (device, port) the message left by,
    /// the cable's other end or, on a ring, the last card before the pass-through ones.
    pub origin: (String, u32),
    pub byte_errors: u64,
    pub failed: u64,
}

/// This device's cabled AuroraFlow CUs (QSFP port, CU name), by port.
pub(super) fn cabled_cus(d: &DeviceDescription) -> Vec<(u32, String)> {
    aurora_cus(d)
        .into_iter()
        .filter(|(port, cu)| peer_of(d, cu, *port).is_some())
        .collect()
}

/// The send and recv CUs on `cu`'s streams, refused with what to change when missing.
fn bench_kernels(d: &DeviceDescription, cu: &str) -> Result<(String, String)> {
    let find = |endpoint: String, want: &str| -> Result<String> {
        let other = stream_peer(d, &endpoint).with_context(|| {
            format!(
                "device {} ({}): {endpoint} is not connected to a benchmark kernel in the link configuration: bench needs AuroraFlow's send/recv kernels on every cabled port (a deployment with app = \"aurora_bench\" and role = \"bench\", e.g. deploy/aurora_pair.toml)",
                d.device, d.deployment
            )
        })?;
        let k = d
            .kernel(&other)
            .with_context(|| format!("device {}: no CU {other}", d.device))?;
        if k.kernel != want {
            bail!(
                "device {} ({}): {endpoint} is connected to {other} (kernel {}), not to AuroraFlow's {want} kernel: bench runs on a deployment with app = \"aurora_bench\" and role = \"bench\"",
                d.device,
                d.deployment,
                k.kernel
            );
        }
        Ok(other)
    };
    Ok((
        find(format!("{cu}.tx_axis"), "send")?,
        find(format!("{cu}.rx_axis"), "recv")?,
    ))
}

/// The lanes of the cabled CUs (none on a pass-through card, which sends and receives
/// nothing itself) with buffers of `max_size` bytes, and the widest stream of their `send`
/// kernels in bytes (every message size must be a multiple of it).
pub(super) fn open(
    device: &mut dyn Device,
    d: &DeviceDescription,
    cabled: &[(u32, String)],
    passes: bool,
    ends: &[ring::End],
    max_size: u64,
) -> Result<(Vec<Lane>, u64)> {
    let mut width = 1u64;
    let mut lanes = Vec::new();
    for (port, cu) in cabled.iter().filter(|_| !passes) {
        let (send, recv) = bench_kernels(d, cu)?;
        let w = d
            .kernel(&send)
            .and_then(|k| k.ports.iter().find(|p| p.name == "data_output"))
            .map_or(64, |p| (p.width / 8).max(1));
        width = width.max(w);
        // Buffers of the largest message, in the banks the link configuration names.
        let send_buf = device.alloc(&bank(d, &send)?, max_size as usize)?;
        let recv_buf = device.alloc(&bank(d, &recv)?, max_size as usize)?;
        lanes.push(Lane {
            cu: cu.clone(),
            port: *port,
            send,
            recv,
            send_buf,
            recv_buf,
            origin: ring::path(ends, &d.device, *port)?.1,
            byte_errors: 0,
            failed: 0,
        });
    }
    Ok((lanes, width))
}
