//! One rank, one device: open it on the backend asked for, load this rank's xclbin, agree
//! with the other ranks on who runs which device, and (simulated devices) join the links
//! to the other ranks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fpga_device::record::{CallLog, Recording};
use fpga_device::sim::aurora_cu::AuroraCu;
use fpga_device::sim::finn::FinnFactory;
use fpga_device::sim::link::AuroraLink;
use fpga_device::sim::{SimDevice, SimOptions};
use fpga_device::xrt::{Selector, SimCard, XrtDevice};
use fpga_device::{Device, RunId};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::transport::{receive_loop, MpiSender};

/// `--xclbin PATH` or `--xclbin DEVICE=PATH`.
pub struct XclbinArg {
    pub device: Option<String>,
    pub path: PathBuf,
}

impl XclbinArg {
    pub fn parse(arg: &str) -> XclbinArg {
        match arg.split_once('=') {
            Some((dev, path)) if !dev.is_empty() && !dev.contains('/') => XclbinArg {
                device: Some(dev.to_string()),
                path: PathBuf::from(path),
            },
            _ => XclbinArg {
                device: None,
                path: PathBuf::from(arg),
            },
        }
    }
}

pub struct Rank {
    pub rank: i32,
    pub device: Box<dyn Device>,
    /// The simulated AuroraFlow CUs by QSFP port, whose links run over MPI (none on cards).
    pub aurora: BTreeMap<u32, Arc<AuroraCu>>,
    pub receivers: Vec<std::thread::JoinHandle<()>>,
    /// The device's calls, when they are recorded (`--record-calls`).
    pub calls: Option<CallLog>,
}

/// Which devices the ranks drive.
pub enum Backend {
    /// The simulated devices of the build graph.
    Sim,
    /// Cards through XRT (libxrt_coreutil), by user BDF or index.
    Xrt(Selector),
    /// The XRT backend's own logic over simulated cards behind XRT's calls.
    XrtSim,
}

impl Backend {
    /// `--backend NAME` of rank `rank`; on cards the rank's `--bdf`, else card index
    /// rank % 3 (three cards per node, as on the cluster's FPGA nodes).
    pub fn parse(name: &str, rank: usize, bdfs: &[String]) -> Result<Backend> {
        Ok(match name {
            "sim" => Backend::Sim,
            "xrt-sim" => Backend::XrtSim,
            "xrt" => Backend::Xrt(match bdfs.get(rank) {
                Some(b) => Selector::Bdf(b.clone()),
                None => Selector::Index((rank % 3) as u32),
            }),
            other => bail!("--backend {other}: expected sim, xrt or xrt-sim"),
        })
    }
}

pub struct Options<'a> {
    pub topology: Option<&'a Path>,
    pub timeout: Duration,
    pub channel_cycles: Option<u64>,
    pub finn: Option<Arc<dyn FinnFactory>>,
    pub record: bool,
}

/// Opens this rank's device on `backend`, loads its xclbin and agrees with the other
/// ranks; on simulated devices (`Sim`, `XrtSim`) the links to the other ranks are joined.
pub fn open(
    world: &SimpleCommunicator,
    backend: Backend,
    xclbins: &[XclbinArg],
    o: Options,
) -> Result<Rank> {
    let rank = world.rank();
    let (device, aurora, receivers): (Box<dyn Device>, _, _) = match backend {
        Backend::Sim => {
            let (dev, rx) = open_sim(world, xclbins, &o)?;
            (Box::new(dev.0), dev.1, rx)
        }
        Backend::XrtSim => {
            let ((sim, aurora), rx) = open_sim(world, xclbins, &o)?;
            let mut dev = XrtDevice::over(SimCard::new(sim));
            dev.load_xclbin(&xclbins[rank as usize].path)?;
            (Box::new(dev), aurora, rx)
        }
        Backend::Xrt(selector) => {
            check_rank_count(world, xclbins)?;
            let mut dev = XrtDevice::open(selector)?;
            let path = &xclbins[rank as usize].path;
            dev.load_xclbin(path)
                .with_context(|| format!("rank {rank}: loading {}", path.display()))?;
            agree(world, &dev, &xclbins[rank as usize], o.topology)?;
            crate::idle::barrier(world);
            (Box::new(dev), BTreeMap::new(), vec![])
        }
    };
    let (device, calls): (Box<dyn Device>, _) = if o.record {
        let (rec, log) = Recording::new(device);
        (Box::new(rec), Some(log))
    } else {
        (device, None)
    };
    Ok(Rank {
        rank,
        device,
        aurora,
        receivers,
        calls,
    })
}

/// Per rank: device name, deployment and platform, NUL-separated.
const NAME_BYTES: usize = 256;

fn check_rank_count(world: &SimpleCommunicator, xclbins: &[XclbinArg]) -> Result<()> {
    let size = world.size();
    if xclbins.len() != size as usize {
        bail!(
            "{} xclbins given (--xclbin) for {size} MPI ranks: start one rank per device (mpirun -n {})",
            xclbins.len(),
            xclbins.len()
        );
    }
    Ok(())
}

/// Checks the loaded device against `--xclbin DEVICE=` and the topology, and that every
/// rank runs a different device of the same deployment build; returns the device of
/// every rank.
fn agree(
    world: &SimpleCommunicator,
    device: &dyn Device,
    arg: &XclbinArg,
    topology: Option<&Path>,
) -> Result<Vec<String>> {
    let rank = world.rank();
    let size = world.size();
    let path = &arg.path;
    let desc = device.description()?.clone();
    let me = desc.device.clone();
    if let Some(expected) = &arg.device {
        if *expected != me {
            bail!(
                "--xclbin {expected}={}: that xclbin is device {me}'s, not {expected}'s",
                path.display()
            );
        }
    }
    if let Some(t) = topology {
        let expected = crate::topology::Topology::read(t)?.device_of_rank(rank)?;
        if expected != me {
            bail!(
                "rank {rank} loads {} (device {me}) but {} assigns device {expected} to rank {rank}: pass the --xclbin in rank order",
                path.display(),
                t.display()
            );
        }
    }

    // Every rank learns which device (of which deployment, for which platform) every other
    // rank runs.
    let ident = format!("{}\0{}\0{}", desc.device, desc.deployment, desc.platform);
    if ident.len() >= NAME_BYTES {
        bail!(
            "{}: device, deployment and platform names are longer than {NAME_BYTES} bytes",
            path.display()
        );
    }
    let mut mine = [0u8; NAME_BYTES];
    mine[..ident.len()].copy_from_slice(ident.as_bytes());
    let mut all = vec![0u8; NAME_BYTES * size as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    let idents: Vec<Vec<String>> = all
        .chunks(NAME_BYTES)
        .map(|c| {
            let end = c.windows(2).position(|w| w == [0, 0]).unwrap_or(c.len());
            c[..end]
                .split(|b| *b == 0)
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()
        })
        .collect();
    let names: Vec<String> = idents.iter().map(|i| i[0].clone()).collect();
    for (r, i) in idents.iter().enumerate() {
        if i.get(1) != Some(&desc.deployment) || i.get(2) != Some(&desc.platform) {
            bail!(
                "{} (rank {rank}) is device {me} of deployment '{}' for {}, but rank {r} runs device {} of deployment '{}' for {}: every --xclbin must come from the same deployment build",
                path.display(),
                desc.deployment,
                desc.platform,
                i[0],
                i.get(1).map_or("", |s| s.as_str()),
                i.get(2).map_or("", |s| s.as_str())
            );
        }
    }
    for (r, n) in names.iter().enumerate() {
        if names.iter().filter(|m| *m == n).count() > 1 {
            bail!("device {n} is loaded by more than one rank (rank {r} and another): check the --xclbin order");
        }
    }
    Ok(names)
}

/// The simulated device with its AuroraFlow CUs by port.
type Sim = (SimDevice, BTreeMap<u32, Arc<AuroraCu>>);

fn open_sim(
    world: &SimpleCommunicator,
    xclbins: &[XclbinArg],
    o: &Options,
) -> Result<(Sim, Vec<std::thread::JoinHandle<()>>)> {
    let rank = world.rank();
    let (topology, timeout) = (o.topology, o.timeout);
    check_rank_count(world, xclbins)?;
    let arg = &xclbins[rank as usize];
    let path = &arg.path;
    let options = SimOptions {
        finn: o.finn.clone(),
        stall_timeout: timeout,
        channel_cycles: o.channel_cycles,
    };
    let mut device = SimDevice::new(format!("rank {rank}"), options);
    device
        .load_xclbin(path)
        .with_context(|| format!("rank {rank}: loading {}", path.display()))?;
    let names = agree(world, &device, arg, topology)?;
    let me = device.description()?.device.clone();

    let mut receivers = Vec::new();
    let links = device.description()?.links.clone();
    for l in links.iter().filter(|l| l.peer_device != me) {
        let peer_rank = names
            .iter()
            .position(|n| *n == l.peer_device)
            .with_context(|| {
                format!(
                    "link {me}:{} -> {}:{}: no rank runs device {} (ranks run {:?})",
                    l.port, l.peer_device, l.peer_port, l.peer_device, names
                )
            })? as i32;
        let cu = device.aurora(&l.cu)?;
        let width = cu.params.fifo_width as usize;
        let rx = Arc::new(AuroraLink::new(
            format!(
                "{}:{} (rank {peer_rank}) -> {me}:{}",
                l.peer_device, l.peer_port, l.port
            ),
            cu.params.clone(),
        ));
        cu.attach_rx(rx.clone());
        cu.attach_tx(Arc::new(MpiSender::new(
            format!(
                "{me}:{} -> {}:{} (rank {peer_rank})",
                l.port, l.peer_device, l.peer_port
            ),
            peer_rank,
            l.peer_port,
            width,
            timeout,
        )));
        let port = l.port;
        receivers.push(std::thread::spawn(move || {
            receive_loop(rx, peer_rank, port, width, timeout)
        }));
    }
    crate::idle::barrier(world);
    let aurora = device.aurora_ports();
    Ok(((device, aurora), receivers))
}

impl Rank {
    /// Closes this rank's outgoing links and waits for the incoming ones to close.
    pub fn finish(self, world: &SimpleCommunicator, within: Duration) {
        for cu in self.aurora.values() {
            if let Some(tx) = cu.tx_sender() {
                if tx.local().is_none() {
                    let _ = tx.close();
                }
            }
        }
        for r in self.receivers {
            let _ = r.join();
        }
        // Not a blocking barrier: a rank that died after its links closed would leave the
        // others waiting forever.
        let mut done = world.immediate_barrier();
        let deadline = std::time::Instant::now() + within;
        loop {
            match done.test() {
                Ok(_) => return,
                Err(r) => done = r,
            }
            if std::time::Instant::now() >= deadline {
                crate::transport::fatal(&format!(
                    "not every rank reached the end of the run within {:?} (one died or hangs; check the other ranks' errors)",
                    within
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Waits for `runs` in turn until `budget` after `t0`, each at least 10 ms.
pub fn wait_runs(
    device: &mut dyn Device,
    runs: &[RunId],
    t0: Instant,
    budget: Duration,
) -> Result<()> {
    for r in runs {
        device.wait(
            *r,
            budget
                .saturating_sub(t0.elapsed())
                .max(Duration::from_millis(10)),
        )?;
    }
    Ok(())
}
