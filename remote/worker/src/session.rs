//! The bot session: CreateBotSession, then UpdateBotSession in a loop that takes a lease
//! (PENDING/ACTIVE → ACTIVE while it runs → COMPLETED with the ActionResult). Any error of
//! the session (server restarted, connection lost) starts a new session after a pause;
//! the lease that was running is dropped, and BuildGrid requeues the leases of a session
//! it closes. A stop (stop.rs: SIGTERM, as Slurm ends a job) ends the session with status
//! BOT_TERMINATING and the running lease handed back, then the worker exits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bazel_remote_apis::google::protobuf::Any;
use bazel_remote_apis::google::rpc::Status;
use forge_reapi::{ClientOptions, GrpcRemoteCache, ReConfig};
use prost::Message;

use crate::args::Args;
use crate::execute;
use crate::log::log;
use crate::proto::v1test2::{
    bots_client::BotsClient, device, BotSession, BotStatus, CreateBotSessionRequest, Device, Lease,
    LeaseState, UpdateBotSessionRequest, Worker,
};
use crate::stop;

/// How long one UpdateBotSession may wait for work (BuildGrid long-polls up to the
/// deadline) before the bot asks again.
const POLL: Duration = Duration::from_secs(20);
/// CreateBotSession's deadline. BuildGrid 0.4.4 long-polls a create for work until the
/// deadline unless 80 % of it is under its NETWORK_TIMEOUT (3 s): this one returns at once,
/// so the bot knows its session's name (needed to say it is going) from the start.
const CREATE_DEADLINE: Duration = Duration::from_millis(3500);
/// How long the goodbye may take before the worker exits anyway.
const GOODBYE_DEADLINE: Duration = Duration::from_secs(2);
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);
/// google.rpc.Code INTERNAL: BuildGrid 0.4.4 retries a lease completed with it (up to
/// `max-job-attempts`), which is right for a worker that could not run the action.
const CODE_INTERNAL: i32 = 13;
/// google.rpc.Code DEADLINE_EXCEEDED: the action ran out of time.
const CODE_DEADLINE_EXCEEDED: i32 = 4;

pub fn run(args: Args) -> Result<()> {
    let work_dir = match &args.work_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir(),
    };
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("creating {}", work_dir.display()))?;
    // what workers killed in this work dir left (exec_root)
    let removed = crate::exec_root::remove_dead(&work_dir);
    if !removed.is_empty() {
        eprintln!(
            "forge-re-worker: removed {} execution root(s) of dead workers in {}",
            removed.len(),
            work_dir.display()
        );
    }
    loop {
        match session(&args, &work_dir) {
            Ok(()) => return Ok(()),
            Err(_) if stop::requested() => return Ok(()),
            Err(e) if forge_reapi::is_unavailable(&e) => {
                log!("{} does not answer; reconnecting", args.address);
                std::thread::sleep(RECONNECT_PAUSE);
            }
            Err(e) => {
                log!("session ended: {e:#}; reconnecting");
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

/// The lease being run: its id, the task running it, and the switch that kills it.
struct Running {
    id: String,
    task: tokio::task::JoinHandle<Result<Outcome>>,
    cancelled: Arc<AtomicBool>,
}

/// A lease's end as the bot reports it: the encoded ActionResult, and the time limit it
/// was killed at, if any.
type Outcome = (Vec<u8>, Option<Duration>);

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
    log!("bot session {}", session.name);
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
                running = Some(start(&cas, lease.clone(), &work_dir, args));
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
                Some(r) => tokio::select! {
                    reply = update => Some(reply),
                    // Done mid-poll: drop the poll and report at once.
                    done = &mut r.task => {
                        finished = completed(r.id.clone(), done);
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
        if reply.is_none() {
            running = None;
        } else if running.as_ref().is_some_and(|r| r.task.is_finished()) {
            let r = running.take().expect("checked");
            finished = completed(r.id, r.task.await);
        }
        match reply {
            None => {}
            Some(Ok(r)) => {
                let mut next = r.into_inner();
                if let Some(r) = running.take() {
                    match next.leases.iter_mut().find(|l| l.id == r.id) {
                        // Keep the state of the lease this bot is running.
                        Some(l) => {
                            l.state = LeaseState::Active as i32;
                            running = Some(r);
                        }
                        // BuildGrid drops a cancelled lease from the session: stop working
                        // on it, and report nothing of it.
                        None => {
                            log!("lease {}: cancelled by the server", r.id);
                            r.cancelled.store(true, Ordering::Relaxed);
                            let _ = r.task.await;
                        }
                    }
                }
                session = next;
            }
            Some(Err(s)) if s.code() == tonic::Code::DeadlineExceeded => {}
            Some(Err(s)) => {
                if let Some(r) = running.take() {
                    r.cancelled.store(true, Ordering::Relaxed);
                    r.task.abort();
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
    if let Some(r) = running {
        // The action's processes die now, not when the blocking thread notices.
        r.cancelled.store(true, Ordering::Relaxed);
        r.task.abort();
        log!("lease {}: handed back (the worker is stopping)", r.id);
        back.push(Lease {
            id: r.id,
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
        Ok(_) => log!("stopped; BuildGrid told"),
        Err(e) => log!("stopped; telling BuildGrid failed: {e}"),
    }
}

fn start(cas: &Arc<GrpcRemoteCache>, lease: Lease, work_dir: &Path, args: &Args) -> Running {
    let (cas, work_dir, bot) = (cas.clone(), work_dir.to_path_buf(), args.bot_id.clone());
    let policy = execute::Policy {
        stop: execute::Stop {
            cancelled: Arc::new(AtomicBool::new(false)),
            max_timeout: args.action_timeout,
        },
        host: args.host.clone(),
    };
    let cancelled = policy.stop.cancelled.clone();
    let id = lease.id.clone();
    log!("lease {id}: running");
    let task = tokio::task::spawn_blocking(move || -> Result<Outcome> {
        let payload = lease.payload.context("the lease has no payload")?;
        let action = execute::action_of(&cas, &payload)?;
        let ran = execute::run(&cas, &action, &work_dir, &bot, &policy)?;
        Ok((ran.result.encode_to_vec(), ran.timed_out))
    });
    Running {
        id,
        task,
        cancelled,
    }
}

/// The lease as reported back: COMPLETED with the ActionResult as an Any (what BuildGrid
/// 0.4.4's scheduler unpacks), with status DEADLINE_EXCEEDED when the action was killed at
/// its time limit (REAPI's rule; BuildGrid neither retries nor caches it), or INTERNAL
/// when the worker could not run it. `None`: cancelled, nothing to report.
fn completed(
    id: String,
    outcome: Result<Result<Outcome>, tokio::task::JoinError>,
) -> Option<Lease> {
    let action_result = |bytes| Any {
        type_url: "type.googleapis.com/build.bazel.remote.execution.v2.ActionResult".to_string(),
        value: bytes,
    };
    let (result, status) = match outcome {
        Ok(Ok((bytes, None))) => (Some(action_result(bytes)), Status::default()),
        Ok(Ok((bytes, Some(limit)))) => {
            log!("lease {id}: killed at its time limit");
            (
                Some(action_result(bytes)),
                status(
                    CODE_DEADLINE_EXCEEDED,
                    format!(
                        "the action ran longer than its time limit of {} s and was killed",
                        limit.as_secs_f64()
                    ),
                ),
            )
        }
        Ok(Err(e)) => {
            log!("lease {id}: {e:#}");
            (None, status(CODE_INTERNAL, format!("{e:#}")))
        }
        Err(e) if e.is_cancelled() => return None,
        Err(e) => (None, status(CODE_INTERNAL, format!("worker task: {e}"))),
    };
    log!("lease {id}: done");
    Some(Lease {
        id,
        state: LeaseState::Completed as i32,
        result,
        status: Some(status),
        ..Default::default()
    })
}

fn status(code: i32, message: String) -> Status {
    Status {
        code,
        message,
        details: vec![],
    }
}
