//! What the loaded xclbin's link configuration says about a CU, as `infer` and `bench` ask
//! it: the memory bank of its m_axi port (`sp=`), the CU at the other end of one of its
//! streams (`stream_connect=`), and its kernel arguments in the order the kernel declares
//! them (the signature its rule records, as the xclbin's metadata numbers it).

use anyhow::{bail, Context, Result};
use fpga_device::KernelArg;
use xclbin::DeviceDescription;

/// The memory bank the link configuration (sp=) gives `cu`'s m_axi port.
pub fn bank(d: &DeviceDescription, cu: &str) -> Result<String> {
    d.memory
        .iter()
        .find(|m| m.cu == cu)
        .map(|m| m.bank.clone())
        .with_context(|| {
            format!(
                "device {}: CU {cu} has no memory bank in the link configuration (sp=)",
                d.device
            )
        })
}

/// The CU at the other end of the stream into or out of `endpoint` ("cu.port").
pub fn stream_peer(d: &DeviceDescription, endpoint: &str) -> Option<String> {
    d.streams.iter().find_map(|s| {
        let other = if s.from == endpoint {
            &s.to
        } else if s.to == endpoint {
            &s.from
        } else {
            return None;
        };
        other.split('.').next().map(str::to_string)
    })
}

/// `cu`'s arguments in its kernel's argument order: `given` by name, its streams as
/// streams. An argument `command` does not set, or a name the kernel does not have, is an
/// error naming the CU; `ports` says where the kernel's ports are defined.
pub fn kernel_args(
    d: &DeviceDescription,
    cu: &str,
    given: &[(&str, KernelArg)],
    command: &str,
    ports: &str,
) -> Result<Vec<(String, KernelArg)>> {
    let k = d
        .kernel(cu)
        .with_context(|| format!("device {}: no CU {cu}", d.device))?;
    let mut out = Vec::new();
    for a in k.args() {
        match (a.kind.as_str(), given.iter().find(|(n, _)| *n == a.name)) {
            ("stream", _) => out.push((a.name.clone(), KernelArg::Stream)),
            (_, Some((_, v))) => out.push((a.name.clone(), *v)),
            (kind, None) => bail!(
                "device {}: CU {cu} ({}) has {kind} argument '{}' that {command} does not set ({ports})",
                d.device,
                k.kernel,
                a.name
            ),
        }
    }
    for (n, _) in given {
        if !out.iter().any(|(m, _)| m == n) {
            bail!(
                "device {}: CU {cu} ({}) has no argument '{n}' (its signature: {})",
                d.device,
                k.kernel,
                out.iter()
                    .map(|(m, _)| m.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(out)
}

/// The AuroraFlow CUs of the device (QSFP port, CU name), by port: the port from the CU's
/// `instance` parameter, else from its name (`aurora_flow_<port>`).
pub fn aurora_cus(d: &DeviceDescription) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = d
        .kernels
        .iter()
        .filter(|k| k.kind == "rtl" && k.kernel.starts_with("aurora_flow"))
        .filter_map(|k| {
            let port = k
                .params
                .get("instance")
                .and_then(|v| v.as_u64())
                .or_else(|| k.cu.rsplit('_').next().and_then(|s| s.parse().ok()))?;
            Some((port as u32, k.cu.clone()))
        })
        .collect();
    out.sort();
    out
}

/// Who sends into the AuroraFlow CU `cu` on QSFP `port`: its link's other end.
pub fn peer_of(d: &DeviceDescription, cu: &str, port: u32) -> Option<(String, u32)> {
    if let Some(l) = d.links.iter().find(|l| l.cu == cu) {
        return Some((l.peer_device.clone(), l.peer_port));
    }
    d.links
        .iter()
        .find(|l| l.peer_device == d.device && l.peer_port == port)
        .map(|l| (d.device.clone(), l.port))
}
