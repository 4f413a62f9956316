//! How the devices are wired: a chain, a ring, a circuit switch (any pair, limited
//! by ports), or an explicit list of port-to-port links.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::devices::Device;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// Device i linked to i+1, in the order of the devices file.
    Chain,
    /// A chain closed back to the first device.
    Ring,
    /// An optical circuit switch: any two devices may be linked, one port each.
    Switch,
    Links {
        links: Vec<Link>,
    },
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Link {
    pub a: String,
    pub a_port: u32,
    pub b: String,
    pub b_port: u32,
}

/// What the MIP needs to know about the wiring.
#[derive(Clone, Debug)]
pub enum Layout {
    /// Contiguous positions along these device orders (a ring gives one per start).
    Ordered(Vec<Vec<usize>>),
    /// `mult[a][b]`: physical links between a and b; `dynamic`: links are made on demand
    /// (switch), so the per-device port limit is a constraint of the MIP.
    General { mult: Vec<Vec<u32>>, dynamic: bool },
}

pub fn load(path: &Path) -> Result<Topology> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a topology JSON", path.display()))
}

fn need_ports(devs: &[Device], i: usize, n: u32, what: &str) -> Result<()> {
    if devs[i].ports < n {
        bail!(
            "topology {what} needs {n} links on device {} but it has {} port(s)",
            devs[i].name,
            devs[i].ports
        );
    }
    Ok(())
}

impl Topology {
    /// Check the wiring against the devices' ports and turn it into a [`Layout`].
    pub fn layout(&self, devs: &[Device]) -> Result<Layout> {
        let n = devs.len();
        match self {
            Topology::Chain => {
                for i in 0..n {
                    let links = (i > 0) as u32 + (i + 1 < n) as u32;
                    need_ports(devs, i, links, "chain")?;
                }
                Ok(Layout::Ordered(vec![(0..n).collect()]))
            }
            Topology::Ring => {
                if n >= 2 {
                    for i in 0..n {
                        need_ports(devs, i, 2, "ring")?;
                    }
                }
                let identical = devs
                    .iter()
                    .all(|d| d.cap == devs[0].cap && d.clk_mhz == devs[0].clk_mhz);
                let starts = if identical { 1 } else { n };
                Ok(Layout::Ordered(
                    (0..starts)
                        .map(|s| (0..n).map(|k| (s + k) % n).collect())
                        .collect(),
                ))
            }
            Topology::Switch => {
                // Identical devices are interchangeable, so a switch plan is a chain
                // over as many devices as the port limit lets a path reach: two ports
                // pass traffic through, one port only ends a path.
                let identical = devs
                    .iter()
                    .all(|d| d.cap == devs[0].cap && d.clk_mhz == devs[0].clk_mhz);
                let min_ports = devs.iter().map(|d| d.ports).min().unwrap_or(0);
                if identical {
                    let reach = match min_ports {
                        0 => 1,
                        1 => n.min(2),
                        _ => n,
                    };
                    return Ok(Layout::Ordered(vec![(0..reach).collect()]));
                }
                let mut mult = vec![vec![1; n]; n];
                for (i, row) in mult.iter_mut().enumerate() {
                    row[i] = 0;
                }
                Ok(Layout::General {
                    mult,
                    dynamic: true,
                })
            }
            Topology::Links { links } => {
                let idx: HashMap<&str, usize> = devs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d.name.as_str(), i))
                    .collect();
                let mut mult = vec![vec![0u32; n]; n];
                let mut used: HashMap<(usize, u32), usize> = HashMap::new();
                let mut per_dev = vec![0u32; n];
                for l in links {
                    for name in [&l.a, &l.b] {
                        if let Some(&d) = idx.get(name.as_str()) {
                            per_dev[d] += 1;
                        }
                    }
                }
                for (d, &c) in per_dev.iter().enumerate() {
                    need_ports(devs, d, c, "links")?;
                }
                for (k, l) in links.iter().enumerate() {
                    let a = *idx
                        .get(l.a.as_str())
                        .with_context(|| format!("link {k}: unknown device {}", l.a))?;
                    let b = *idx
                        .get(l.b.as_str())
                        .with_context(|| format!("link {k}: unknown device {}", l.b))?;
                    if a == b {
                        bail!("link {k}: connects device {} to itself", l.a);
                    }
                    for (d, p) in [(a, l.a_port), (b, l.b_port)] {
                        if p >= devs[d].ports {
                            bail!(
                                "link {k}: device {} has ports 0..{}, not port {p}",
                                devs[d].name,
                                devs[d].ports
                            );
                        }
                        if let Some(prev) = used.insert((d, p), k) {
                            bail!(
                                "links {prev} and {k} both use port {p} of device {}",
                                devs[d].name
                            );
                        }
                    }
                    mult[a][b] += 1;
                    mult[b][a] += 1;
                }
                match maximal_paths(&mult, 64) {
                    Some(paths) => Ok(Layout::Ordered(paths)),
                    None => Ok(Layout::General {
                        mult,
                        dynamic: false,
                    }),
                }
            }
        }
    }
}

/// Every simple path from device 0 that cannot be extended, or None when there are
/// more than `limit` (then the general formulation is used).
fn maximal_paths(mult: &[Vec<u32>], limit: usize) -> Option<Vec<Vec<usize>>> {
    fn rec(
        mult: &[Vec<u32>],
        path: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        limit: usize,
    ) -> bool {
        let last = *path.last().unwrap();
        let mut extended = false;
        for next in 0..mult.len() {
            if mult[last][next] > 0 && !path.contains(&next) {
                extended = true;
                path.push(next);
                let ok = rec(mult, path, out, limit);
                path.pop();
                if !ok {
                    return false;
                }
            }
        }
        if !extended {
            out.push(path.clone());
        }
        out.len() <= limit
    }
    let mut out = Vec::new();
    rec(mult, &mut vec![0], &mut out, limit).then_some(out)
}
