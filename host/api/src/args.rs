//! A user's kernel arguments by name, checked against the kernel's signature (the xclbin's
//! description, as the kernel's rule recorded it): which memory bank a buffer argument lives
//! in, and the whole argument list of a run with the description's scalar defaults filled
//! in. Every error names the argument as `cu.arg`.

use anyhow::{bail, Context, Result};
use fpga_device::KernelArg;
use xclbin::description::ArgEntry;
use xclbin::{DeviceDescription, KernelEntry};

use crate::topology::Topology;

fn kernel<'a>(d: &'a DeviceDescription, cu: &str) -> Result<&'a KernelEntry> {
    d.kernel(cu).with_context(|| {
        format!(
            "{cu}: no such CU on device {} (its CUs: {})",
            d.device,
            d.kernels
                .iter()
                .map(|k| k.cu.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn names(args: &[ArgEntry]) -> String {
    args.iter()
        .map(|a| format!("{} ({})", a.name, a.kind))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bank of buffer argument `arg` of `cu`: the link configuration's (`sp=`, by the
/// argument's m_axi port or its name), else topology.json's "cus" entry.
pub fn bank(d: &DeviceDescription, t: Option<&Topology>, cu: &str, arg: &str) -> Result<String> {
    let k = kernel(d, cu)?;
    let args = k.args();
    let a = args.iter().find(|a| a.name == arg).with_context(|| {
        format!(
            "{cu}.{arg}: CU {cu} ({}) has no argument '{arg}' (its arguments: {})",
            k.kernel,
            names(&args)
        )
    })?;
    if a.kind != "memory" {
        bail!(
            "{cu}.{arg}: a {} argument, not a buffer (pass it to start as Arg::Scalar, or not at all if a stream)",
            a.kind
        );
    }
    let linked = d
        .memory
        .iter()
        .find(|m| m.cu == cu && (m.port == a.port || m.port == arg));
    if let Some(m) = linked {
        return Ok(m.bank.clone());
    }
    t.and_then(|t| t.cu(&d.device, cu))
        .and_then(|c| c.memory.get(arg))
        .cloned()
        .with_context(|| {
            format!(
                "{cu}.{arg}: no memory bank for it on device {}: neither the xclbin's link configuration (sp=) nor topology.json's \"cus\" name one (give the CU's `memory` in the deployment's description)",
                d.device
            )
        })
}

/// `cu`'s arguments in its kernel's order: `given` by name, streams as streams, scalars not
/// given from topology.json's "cus" defaults.
pub fn bind(
    d: &DeviceDescription,
    t: Option<&Topology>,
    cu: &str,
    given: &[(&str, KernelArg)],
) -> Result<Vec<(String, KernelArg)>> {
    let k = kernel(d, cu)?;
    if k.control() == "ap_ctrl_none" {
        bail!("{cu}: a free-running (ap_ctrl_none) CU: it runs from Session::init on, it is never started");
    }
    let args = k.args();
    for (n, _) in given {
        if !args.iter().any(|a| a.name == *n) {
            bail!(
                "{cu}.{n}: CU {cu} ({}) has no argument '{n}' (its arguments: {})",
                k.kernel,
                names(&args)
            );
        }
    }
    let defaults = t.and_then(|t| t.cu(&d.device, cu));
    let mut out = Vec::new();
    for a in &args {
        let v = given.iter().find(|(n, _)| *n == a.name).map(|(_, v)| *v);
        let bound = match (a.kind.as_str(), v) {
            ("stream", None) => KernelArg::Stream,
            ("stream", Some(_)) => bail!(
                "{cu}.{}: a stream argument, connected by the link configuration: do not pass it",
                a.name
            ),
            ("scalar", Some(KernelArg::Scalar(v))) => KernelArg::Scalar(v),
            ("memory", Some(KernelArg::Buffer(b))) => KernelArg::Buffer(b),
            ("scalar", None) => match defaults.and_then(|c| c.scalars.get(&a.name)) {
                Some(v) => KernelArg::Scalar(*v),
                None => bail!(
                    "{cu}.{}: scalar argument not given and without a default (topology.json \"cus\" has none for it)",
                    a.name
                ),
            },
            (_, None) => bail!("{cu}.{}: {} argument not given", a.name, a.kind),
            (kind, Some(_)) => bail!(
                "{cu}.{}: a {kind} argument, given as a {}",
                a.name,
                if kind == "scalar" { "buffer" } else { "scalar" }
            ),
        };
        out.push((a.name.clone(), bound));
    }
    Ok(out)
}
