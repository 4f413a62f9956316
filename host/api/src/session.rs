//! `Session`: one rank of a deployment as a user's host program drives it. `init` is the
//! rank setup aurora-host runs (MPI, this rank's device, its xclbin, the simulated links),
//! then the calls of a host program: buffers in the banks the link configuration gives each
//! argument, kernel runs with arguments by name, the AuroraFlow counters, MPI.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use aurora::{AuroraFlow, Counters};
use fpga_device::{BufferId, CuInfo, CuRegisters, Device, KernelArg, RunId};
use mpi::topology::{Communicator, SimpleCommunicator};
use xclbin::DeviceDescription;

use crate::options::{self, DeploymentOptions};
use crate::setup::{self, Rank};
use crate::topology::Topology;
use crate::{idle, launch, link_model, rank_lines, transport};

/// One rank: MPI initialised, this rank's device opened, its xclbin loaded, its simulated
/// links joined, its free-running CUs begun.
pub struct Session {
    world: SimpleCommunicator,
    rank: Option<Rank>,
    desc: DeviceDescription,
    topology: Option<Topology>,
    options: DeploymentOptions,
    /// Dropped last: MPI_Finalize (not when `finish` fails: the caller ends the run with
    /// an abort, which needs MPI).
    universe: Option<mpi::environment::Universe>,
}

/// A device buffer for one kernel argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    id: BufferId,
    bytes: usize,
    bank: String,
}

impl Buffer {
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// The memory bank it lives in ("HBM[0]").
    pub fn bank(&self) -> &str {
        &self.bank
    }
}

/// A started kernel run.
#[derive(Debug)]
pub struct Run {
    id: RunId,
    cu: String,
}

impl Run {
    pub fn cu(&self) -> &str {
        &self.cu
    }
}

/// A kernel argument given by name to `Session::start`.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Scalar(u64),
    Buffer(&'a Buffer),
}

impl Session {
    /// Parses and removes the deployment's options wherever they stand in `args` (program
    /// name excluded; see `options`), re-launches the program under mpirun when it runs
    /// outside MPI (one rank per `--xclbin`; the launcher then exits with the run's status),
    /// opens this rank's device. Returns the session and the user's arguments.
    pub fn init(args: impl IntoIterator<Item = String>) -> Result<(Session, Vec<String>)> {
        let (o, rest) = options::parse(args)?;
        if !launch::under_mpi() {
            let code = launch::launch(&o.mpirun, o.xclbins.len(), false, o.backend != "xrt")?;
            std::process::exit(code);
        }
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Multiple)
            .context("MPI could not be initialised (once per program: one Session)")?;
        let world = universe.world();
        transport::abort_on_panic();
        match open(&world, &o) {
            Ok((rank, desc, topology)) => {
                let session = Session {
                    world,
                    rank: Some(rank),
                    desc,
                    topology,
                    options: o,
                    universe: Some(universe),
                };
                Ok((session, rest))
            }
            Err(e) => {
                // MPI stays up: the caller ends the run with an abort (`main`), which the
                // other ranks, perhaps in a collective with this one, need
                std::mem::forget(universe);
                Err(e)
            }
        }
    }

    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    pub fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    /// This rank's device as the deployment names it ("fpga0").
    pub fn device_name(&self) -> &str {
        &self.desc.device
    }

    /// The loaded xclbin's description (CUs, streams, memory banks, links).
    pub fn description(&self) -> &DeviceDescription {
        &self.desc
    }

    /// The deployment's options this program was started with.
    pub fn options(&self) -> &DeploymentOptions {
        &self.options
    }

    fn device(&self) -> &dyn Device {
        &*self.rank.as_ref().expect("open until finish").device
    }

    fn device_mut(&mut self) -> &mut dyn Device {
        &mut *self.rank.as_mut().expect("open until finish").device
    }

    /// The CUs of this rank's xclbin.
    pub fn compute_units(&self) -> Result<Vec<CuInfo>> {
        self.device().compute_units()
    }

    /// A buffer of `bytes` for argument `arg` of CU `cu`, in the bank the xclbin's link
    /// configuration (`sp=`) gives it, else the one topology.json's "cus" entry names.
    pub fn alloc(&mut self, cu: &str, arg: &str, bytes: usize) -> Result<Buffer> {
        let bank = crate::args::bank(&self.desc, self.topology.as_ref(), cu, arg)?;
        let id = self
            .device_mut()
            .alloc(&bank, bytes)
            .with_context(|| format!("{cu}.{arg}: {bytes} bytes in {bank}"))?;
        Ok(Buffer { id, bytes, bank })
    }

    pub fn write(&mut self, buf: &Buffer, offset: usize, data: &[u8]) -> Result<()> {
        check_range(buf, offset, data.len())?;
        self.device_mut().write_buffer(buf.id, offset, data)
    }

    pub fn read(&mut self, buf: &Buffer, offset: usize, out: &mut [u8]) -> Result<()> {
        check_range(buf, offset, out.len())?;
        self.device_mut().read_buffer(buf.id, offset, out)
    }

    /// Starts CU `cu` with its arguments by name; a scalar not given takes the default of
    /// topology.json's "cus" entry. Stream arguments are never passed (the link
    /// configuration connects them).
    pub fn start(&mut self, cu: &str, args: &[(&str, Arg)]) -> Result<Run> {
        let given: Vec<(&str, KernelArg)> = args
            .iter()
            .map(|(n, a)| {
                (
                    *n,
                    match a {
                        Arg::Scalar(v) => KernelArg::Scalar(*v),
                        Arg::Buffer(b) => KernelArg::Buffer(b.id),
                    },
                )
            })
            .collect();
        let all = crate::args::bind(&self.desc, self.topology.as_ref(), cu, &given)?;
        let id = self.device_mut().start(cu, &all)?;
        Ok(Run {
            id,
            cu: cu.to_string(),
        })
    }

    /// Waits for `run` to complete, at most `timeout`; then checks the free-running CUs.
    pub fn wait(&mut self, run: Run, timeout: Duration) -> Result<()> {
        let dev = self.device_mut();
        dev.wait(run.id, timeout)
            .with_context(|| format!("waiting for {}", run.cu))?;
        dev.check_free_running()
    }

    /// The counters of every AuroraFlow CU on this card, by QSFP port.
    pub fn link_status(&self) -> Result<Vec<(u32, Counters)>> {
        let dev = self.device();
        crate::link_config::aurora_cus(&self.desc)
            .into_iter()
            .map(|(port, cu)| Ok((port, flow(dev, &cu).counters()?)))
            .collect()
    }

    /// COUNTER_RESET on every AuroraFlow CU of this card.
    pub fn reset_link_counters(&mut self) -> Result<()> {
        let dev = self.device();
        for (_, cu) in crate::link_config::aurora_cus(&self.desc) {
            flow(dev, &cu).reset_counters()?;
        }
        Ok(())
    }

    /// The world communicator, for the program's own MPI calls.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Every rank reaches this point (MPI_Barrier, waited for without spinning).
    pub fn barrier(&self) {
        idle::barrier(&self.world);
    }

    /// Ends the run: the free-running CUs' part ended (their errors returned), the calls
    /// written (`--record-calls`), the links closed and every rank at the end; then this
    /// rank's done line for the launcher and MPI_Finalize.
    pub fn finish(mut self) -> Result<()> {
        let timeout = self.options.timeout;
        let mut rank = self.rank.take().expect("finish once");
        let ended = rank.device.end_free_running(timeout);
        if let (Some(dir), Some(log)) = (&self.options.record_calls, &rank.calls) {
            crate::record::write(dir, rank.rank, log)?;
        }
        rank.finish(&self.world, timeout);
        if let Err(e) = ended {
            std::mem::forget(self.universe.take());
            return Err(e);
        }
        rank_lines::done(self.world.rank());
        Ok(())
    }
}

impl Drop for Session {
    /// A session that ends without `finish` (an early return with an error) leaves MPI up:
    /// MPI_Finalize would wait for the other ranks, and the links' threads still use MPI;
    /// the process exits, and mpirun ends the run.
    fn drop(&mut self) {
        if self.rank.is_some() {
            std::mem::forget(self.universe.take());
        }
    }
}

/// An AuroraFlow CU's registers through the device.
fn flow<'a>(dev: &'a dyn Device, cu: &str) -> AuroraFlow<CuRegisters<'a, dyn Device + 'a>> {
    AuroraFlow::new(
        cu.to_string(),
        CuRegisters {
            device: dev,
            cu: cu.to_string(),
        },
    )
}

fn check_range(buf: &Buffer, offset: usize, len: usize) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > buf.bytes) {
        bail!(
            "{len} bytes at offset {offset} do not fit the {} byte buffer in {}",
            buf.bytes,
            buf.bank
        );
    }
    Ok(())
}

/// This rank's device opened, its xclbin loaded, its links joined and modelled, its
/// free-running CUs begun.
fn open(
    world: &SimpleCommunicator,
    o: &DeploymentOptions,
) -> Result<(Rank, DeviceDescription, Option<Topology>)> {
    let topology = o.topology.as_deref().map(Topology::read).transpose()?;
    if let Some(t) = &topology {
        for d in &o.throttle_devices {
            if !t.devices.iter().any(|x| &x.name == d) {
                let names: Vec<&str> = t.devices.iter().map(|x| x.name.as_str()).collect();
                bail!(
                    "--throttle-device {d}: the deployment has no such device (it has {})",
                    names.join(", ")
                );
            }
        }
    }
    let mut rank = setup::open(
        world,
        o.backend(world.rank() as usize)?,
        &o.xclbin_args(),
        setup::Options {
            topology: o.topology.as_deref(),
            timeout: o.timeout,
            channel_cycles: o.channel_cycles,
            finn: None,
            record: o.record_calls.is_some(),
        },
    )?;
    let desc = rank.device.description()?.clone();
    let modelled = !rank.aurora.is_empty();
    link_model::set_up(
        &rank.aurora,
        desc.clock_mhz,
        o.throttle_of(&desc.device),
        modelled,
    )?;
    begin_free_running(&mut *rank.device, &desc)?;
    // every rank's links take part before any rank sends
    idle::barrier(world);
    Ok((rank, desc, topology))
}

/// The free-running (ap_ctrl_none) CUs take part from now on: the cabled AuroraFlow CUs
/// and every other free-running kernel, except tie-off sinks (nothing arrives for them).
fn begin_free_running(device: &mut dyn Device, d: &DeviceDescription) -> Result<()> {
    let cabled: Vec<String> = crate::link_config::aurora_cus(d)
        .into_iter()
        .filter(|(port, cu)| crate::link_config::peer_of(d, cu, *port).is_some())
        .map(|(_, cu)| cu)
        .collect();
    for k in d.kernels.iter().filter(|k| k.control() == "ap_ctrl_none") {
        let skip = if k.kernel.starts_with("aurora_flow") {
            !cabled.contains(&k.cu)
        } else {
            k.kernel == "tie_off_sink"
        };
        if !skip {
            device.begin_free_running(&k.cu)?;
        }
    }
    Ok(())
}

/// A host program's main: `Session::init` with the process's arguments, `body` with the
/// session and the user's arguments, `finish`. An error anywhere ends every rank at once
/// with the error's message (as aurora-host's), instead of leaving the other ranks waiting
/// for a rank that is gone.
pub fn main(body: impl FnOnce(&mut Session, Vec<String>) -> Result<()>) -> ! {
    main_with_status(|session, rest| body(session, rest).map(|()| 0))
}

/// [`main`] for a body that decides the exit status itself (e.g. 1 for a result that
/// differs from its reference, which is not an error that must abort the other ranks).
pub fn main_with_status(body: impl FnOnce(&mut Session, Vec<String>) -> Result<i32>) -> ! {
    let (mut session, rest) = match Session::init(std::env::args().skip(1)) {
        Ok(s) => s,
        Err(e) if mpi::environment::is_initialized() => transport::fatal(&format!("{e:#}")),
        Err(e) => {
            // before MPI: the launcher (or mpirun) ends the run on this exit
            let rank = std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_else(|_| "?".into());
            rank_lines::stderr_line(&format!("{}{rank}: error: {e:#}", rank_lines::ERROR));
            std::process::exit(1)
        }
    };
    // The body's error aborts while the session (and with it MPI) is still alive: a session
    // dropped first would finalize MPI, and the abort after it would crash.
    let status = match body(&mut session, rest) {
        Ok(status) => status,
        Err(e) => transport::fatal(&format!("{e:#}")),
    };
    if let Err(e) = session.finish() {
        transport::fatal(&format!("{e:#}"));
    }
    std::process::exit(status)
}
