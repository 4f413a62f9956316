//! A FINN network runs as one pipeline: the input DMA on the first device, then each card's
//! piece of the network, each handing its stream to the next card over a cable. The
//! partitioner only cuts where a cable joins two cards and lays the pipeline along a path of
//! cables from the first device (finn/partitioner `topology.rs`), and the deployment builds a
//! partition for every device. So every device of a FINN deployment must lie on one path of
//! cables starting at the first device; a card off that path would get no layers, and its
//! build would fail far from the description. This check refuses such a description at its
//! cabling, naming the cards the pipeline cannot reach.

use anyhow::Result;

use crate::deployment::{App, Deployment};

/// Upper bound on the path search's steps. Each QSFP port carries one cable, so a device has
/// at most as many neighbours as ports (two on a U280) and the search is linear there; on a
/// platform with many ports it could grow, and past this bound the check gives up rather
/// than stall (the partitioner then reports what it cannot place).
const MAX_STEPS: usize = 1_000_000;

/// Refuse a FINN description whose cables do not join every device into one path from the
/// first device.
pub fn check(dep: &Deployment, ports: &[u32]) -> Result<()> {
    if dep.app != App::Finn || dep.devices.len() < 2 {
        return Ok(());
    }
    let n = dep.devices.len();
    let index = |name: &str| dep.devices.iter().position(|d| d.name == name);
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for l in &dep.links {
        // A card's port looped onto its other port carries no cut (partitioner::topology_json).
        if let (Some(a), Some(b)) = (index(&l.a.device), index(&l.b.device)) {
            if a != b {
                next[a].push(b);
                next[b].push(a);
            }
        }
    }
    let mut search = Search {
        next: &next,
        path: vec![0],
        best: vec![0],
        steps: 0,
    };
    search.extend();
    if search.best.len() == n || search.steps > MAX_STEPS {
        return Ok(());
    }
    Err(dep
        .src
        .at(&dep.cabling_span, message(dep, &search.best, ports)))
}

/// Depth-first search for the longest simple path from device 0.
struct Search<'a> {
    next: &'a [Vec<usize>],
    path: Vec<usize>,
    best: Vec<usize>,
    steps: usize,
}

impl Search<'_> {
    /// True once a path through every device is found (or the search gave up).
    fn extend(&mut self) -> bool {
        self.steps += 1;
        if self.path.len() > self.best.len() {
            self.best = self.path.clone();
        }
        if self.best.len() == self.next.len() || self.steps > MAX_STEPS {
            return true;
        }
        let last = *self.path.last().unwrap();
        for &k in &self.next[last] {
            if !self.path.contains(&k) {
                self.path.push(k);
                let done = self.extend();
                self.path.pop();
                if done {
                    return true;
                }
            }
        }
        false
    }
}

/// What is wrong and what to change: the cards off the longest path (with their lines), and
/// a cable that would extend it where both ends have a free port.
fn message(dep: &Deployment, best: &[usize], ports: &[u32]) -> String {
    let name = |i: usize| dep.devices[i].name.as_str();
    let path: Vec<&str> = best.iter().map(|&i| name(i)).collect();
    let off: Vec<String> = (0..dep.devices.len())
        .filter(|i| !best.contains(i))
        .map(|i| format!("{} (line {})", name(i), dep.src.line(&dep.devices[i].span)))
        .collect();
    let last = name(*best.last().unwrap());
    let first_off = (0..dep.devices.len()).find(|i| !best.contains(i)).unwrap();
    let free = |dev: &str| {
        ports.iter().copied().find(|&p| {
            !dep.links
                .iter()
                .any(|l| [&l.a, &l.b].iter().any(|e| e.device == dev && e.port == p))
        })
    };
    // A [[link]] can be proposed only where the cables are [[link]] tables ([topology] and
    // [[link]] are exclusive).
    let fix = match (free(last), free(name(first_off))) {
        (Some(a), Some(b)) if dep.topology_kind.is_none() => format!(
            "add a cable ([[link]] a = \"{last}:{a}\", b = \"{}:{b}\")",
            name(first_off)
        ),
        _ => "re-cable the cards as a chain ([topology] kind = \"chain\": port 1 of each card \
              to port 0 of the next) and list the devices in the chain's order, the first at \
              one end"
            .to_string(),
    };
    let loopback = if dep.links.iter().any(|l| l.a.device == l.b.device) {
        " (a loopback on one card carries no cut)"
    } else {
        ""
    };
    format!(
        "app finn runs the network as one pipeline from {first} along cables between cards, but \
         the cables take it through {} only{loopback}, so {} would get no layers and the \
         deployment could not be built; {fix}, or remove the idle card from the description \
         and the BUCK target's devices",
        path.join(" -> "),
        off.join(", "),
        first = name(0),
    )
}
