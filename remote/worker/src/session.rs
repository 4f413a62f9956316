//! The bot session: CreateBotSession, then UpdateBotSession in a loop that takes a lease
//! (PENDING/ACTIVE → ACTIVE while it runs → COMPLETED with the ActionResult). Any error of
//! the session (server restarted, connection lost) starts a new session after a pause;
//! the lease that was running is dropped, and BuildGrid requeues the leases of a session
//! it closes. A stop (stop.rs: SIGTERM, as Slurm ends a job) ends the session with status
//! BOT_TERMINATING and the running lease handed back, then the worker exits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bazel_remote_apis::google::protobuf::Any;
use bazel_remote_apis::google::rpc::Status;
use forge_reapi::{ClientOptions, GrpcRemoteCache, ReConfig};
use prost::Message;

use crate::args::Args;
use crate::execute;
use crate::proto::v1test2::{
    bots_client::BotsClient, device, BotSession, BotStatus, CreateBotSessionRequest, Device, Lease,
    LeaseState, UpdateBotSessionRequest, Worker,
};
use crate::stop;

/// How long one UpdateBotSession may wait for work (BuildGrid long-polls up to the
/// deadline) before the bot asks again.
const POLL: Duration = Duration::from_secs(20);
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);
/// CreateBotSession's deadline. BuildGrid 0.4.4 long-polls a create for work until the
/// deadline unless 80 % of it is under its NETWORK_TIMEOUT (3 s): this one returns at once,
/// so the bot knows its session's name (needed to say it is going) from the start.
const CREATE_DEADLINE: Duration = Duration::from_millis(3500);
/// How long the goodbye may take before the worker exits anyway.
const GOODBYE_DEADLINE: Duration = Duration::from_secs(2);
/// google.rpc.Code INTERNAL: BuildGrid 0.4.4 retries a lease completed with it (up to
/// `max-job-attempts`), which is right for a worker that could not run the action.
const CODE_INTERNAL: i32 = 13;

pub fn run(args: Args) -> Result<()> {
    let work_dir = match &args.work_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir(),
    };
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("creating {}", work_dir.display()))?;
    loop {
        match session(&args, &work_dir) {
            Ok(()) => return Ok(()),
            Err(_) if stop::requested() => return Ok(()),
            Err(e) => {
                eprintln!("forge-re-worker: session ended: {e:#}; reconnecting");
                std::thread::sleep(RECONNECT_PAUSE);
            }
        }
        if stop::requested() {
            return Ok(());
        }
    }
}

fn connect_cas(args: &Args) -> Result<GrpcRemoteCache> {
    let mut section = std::collections::BTreeMap::new();
    section.insert("address".to_string(), args.address.clone());
    // `grpc://` is plaintext, `grpcs://` TLS: the address says which, as in buck2's keys.
    let tls = args.address.starts_with("grpcs://");
    section.insert("tls".to_string(), tls.to_string());
    if !args.instance.is_empty() {
        section.insert("instance_name".to_string(), args.instance.clone());
    }
    let cfg = ReConfig::parse(&section)?.context("no address")?;
    GrpcRemoteCache::connect(cfg, ClientOptions::default())
}

/// One bot session, from a fresh CAS client (its circuit breaker may have tripped while
/// the server was away) to the first error.
fn session(args: &Args, work_dir: &std::path::Path) -> Result<()> {
    let cas = Arc::new(connect_cas(args)?);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(serve(args, cas.clone(), work_dir.to_path_buf()));
    // The CAS client owns a runtime, which must not be dropped inside this one; an action
    // still running on a blocking thread keeps its own reference.
    rt.shutdown_background();
    drop(cas);
    outcome
}

fn worker(args: &Args) -> Worker {
    Worker {
        // BuildGrid matches the primary (first) device's properties with the action's.
        devices: vec![Device {
            handle: args.bot_id.clone(),
            properties: args
                .properties
                .iter()
                .map(|(k, v)| device::Property {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        }],
        ..Default::default()
    }
}

type Running = (String, tokio::task::JoinHandle<Result<Vec<u8>>>);

async fn serve(args: &Args, cas: Arc<GrpcRemoteCache>, work_dir: PathBuf) -> Result<()> {
    let uri = args
        .address
        .replacen("grpcs://", "https://", 1)
        .replacen("grpc://", "http://", 1);
    let channel = tonic::transport::Endpoint::from_shared(uri)?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .context("connecting to the Bots service")?;
    let mut bots = BotsClient::new(channel);
    let mut create = tonic::Request::new(CreateBotSessionRequest {
        parent: args.instance.clone(),
        bot_session: Some(BotSession {
            bot_id: args.bot_id.clone(),
            status: BotStatus::Ok as i32,
            worker: Some(worker(args)),
            ..Default::default()
        }),
    });
    create.set_timeout(CREATE_DEADLINE);
    let mut session = bots
        .create_bot_session(create)
        .await
        .context("CreateBotSession")?
        .into_inner();
    eprintln!("forge-re-worker: bot session {}", session.name);
    let mut running: Option<Running> = None;
    let mut finished: Option<Lease> = None;
    loop {
        // Leases are the server's list plus the state this bot gives them.
        session.leases.retain(|l| {
            l.state == LeaseState::Pending as i32 || l.state == LeaseState::Active as i32
        });
        if let Some(done) = finished.take() {
            session.leases.retain(|l| l.id != done.id);
            session.leases.push(done);
        }
        if running.is_none() {
            if let Some(lease) = session.leases.iter_mut().find(|l| {
                l.state == LeaseState::Pending as i32 || l.state == LeaseState::Active as i32
            }) {
                lease.state = LeaseState::Active as i32;
                running = Some(start(&cas, lease.clone(), &work_dir, &args.bot_id));
            }
        }
        let mut req = tonic::Request::new(UpdateBotSessionRequest {
            name: session.name.clone(),
            bot_session: Some(session.clone()),
            update_mask: None,
        });
        req.set_timeout(POLL);
        let update = bots.update_bot_session(req);
        let step = async {
            match running.as_mut() {
                None => Some(update.await),
                Some((id, handle)) => tokio::select! {
                    r = update => Some(r),
                    // Done mid-poll: drop the poll and report at once.
                    done = handle => {
                        finished = Some(completed(id.clone(), done));
                        None
                    }
                },
            }
        };
        let reply = tokio::select! {
            r = step => r,
            () = stop::wait() => {
                goodbye(&mut bots, session, running.take(), finished.take()).await;
                return Ok(());
            }
        };
        if finished.is_some() {
            running = None;
        } else if running.as_ref().is_some_and(|(_, h)| h.is_finished()) {
            let (id, handle) = running.take().expect("checked");
            finished = Some(completed(id, handle.await));
        }
        match reply {
            None => {}
            Some(Ok(r)) => {
                let mut next = r.into_inner();
                // Keep the state of the lease this bot is running.
                if let Some((id, _)) = &running {
                    for l in next.leases.iter_mut().filter(|l| &l.id == id) {
                        l.state = LeaseState::Active as i32;
                    }
                }
                session = next;
            }
            Some(Err(s)) if s.code() == tonic::Code::DeadlineExceeded => {}
            Some(Err(s)) => {
                if let Some((_, h)) = running.take() {
                    h.abort();
                }
                return Err(anyhow::anyhow!(
                    "UpdateBotSession: {:?}: {}",
                    s.code(),
                    s.message()
                ));
            }
        }
    }
}

/// The last UpdateBotSession: status BOT_TERMINATING (BuildGrid assigns no lease to a bot
/// that is not OK) with a finished lease reported and the running one handed back as failed
/// with INTERNAL, which BuildGrid retries on another bot. Errors are only logged: the worker
/// exits either way, and BuildGrid's keepalive timeout covers a goodbye that did not arrive.
async fn goodbye(
    bots: &mut BotsClient<tonic::transport::Channel>,
    mut session: BotSession,
    running: Option<Running>,
    finished: Option<Lease>,
) {
    session.status = BotStatus::BotTerminating as i32;
    let mut back: Vec<Lease> = finished.into_iter().collect();
    if let Some((id, handle)) = running {
        handle.abort();
        eprintln!("forge-re-worker: lease {id}: handed back (the worker is stopping)");
        back.push(Lease {
            id,
            state: LeaseState::Completed as i32,
            status: Some(status(
                CODE_INTERNAL,
                "forge-re-worker stopped (its job ended or was cancelled)".to_string(),
            )),
            ..Default::default()
        });
    }
    session
        .leases
        .retain(|l| !back.iter().any(|b| b.id == l.id));
    session.leases.extend(back);
    let mut req = tonic::Request::new(UpdateBotSessionRequest {
        name: session.name.clone(),
        bot_session: Some(session),
        update_mask: None,
    });
    req.set_timeout(GOODBYE_DEADLINE);
    match bots.update_bot_session(req).await {
        Ok(_) => eprintln!("forge-re-worker: stopped; BuildGrid told"),
        Err(e) => eprintln!("forge-re-worker: stopped; telling BuildGrid failed: {e}"),
    }
}

fn start(
    cas: &Arc<GrpcRemoteCache>,
    lease: Lease,
    work_dir: &std::path::Path,
    bot: &str,
) -> Running {
    let (cas, work_dir, bot) = (cas.clone(), work_dir.to_path_buf(), bot.to_string());
    let id = lease.id.clone();
    eprintln!("forge-re-worker: lease {id}: running");
    let handle = tokio::task::spawn_blocking(move || -> Result<Vec<u8>> {
        let payload = lease.payload.context("the lease has no payload")?;
        let action = execute::action_of(&cas, &payload)?;
        let result = execute::run(&cas, &action, &work_dir, &bot)?;
        Ok(result.encode_to_vec())
    });
    (id, handle)
}

/// The lease as reported back: COMPLETED with the ActionResult as an Any (what BuildGrid
/// 0.4.4's scheduler unpacks), or with status INTERNAL when the worker failed.
fn completed(id: String, outcome: Result<Result<Vec<u8>>, tokio::task::JoinError>) -> Lease {
    let (result, status) = match outcome {
        Ok(Ok(bytes)) => (
            Some(Any {
                type_url: "type.googleapis.com/build.bazel.remote.execution.v2.ActionResult"
                    .to_string(),
                value: bytes,
            }),
            Status::default(),
        ),
        Ok(Err(e)) => {
            eprintln!("forge-re-worker: lease {id}: {e:#}");
            (None, status(CODE_INTERNAL, format!("{e:#}")))
        }
        Err(e) => (None, status(CODE_INTERNAL, format!("worker task: {e}"))),
    };
    eprintln!("forge-re-worker: lease {id}: done");
    Lease {
        id,
        state: LeaseState::Completed as i32,
        result,
        status: Some(status),
        ..Default::default()
    }
}

fn status(code: i32, message: String) -> Status {
    Status {
        code,
        message,
        details: vec![],
    }
}
