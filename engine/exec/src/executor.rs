//! One build: [`scheduler`] (which actions run, when, on which worker), [`pipeline`] (one
//! action: key -> local action cache -> remote cache -> execute -> store) and [`local_run`]
//! (a command in its sandbox, its outputs checked and moved into place).

mod local_run;
mod pipeline;
mod ready_queue;
mod remote_run;
mod scheduler;
mod up_to_date;

pub(crate) use scheduler::{producer_for, Riders};
pub(crate) use up_to_date::all_up_to_date;

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Mutex;

use crate::action_cache::ActionCache;
use crate::build_log::ActionRecord;
use crate::cas::Cas;
use crate::digest::DigestCache;
use crate::janitor::Janitor;
use crate::layout::Layout;
use crate::progress::Progress;
use crate::remote::RemoteState;
use crate::sandbox::Sandboxes;
use crate::ExecOptions;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    UpToDate,
    Cache,
    Remote,
    /// Executed by the remote engine.
    RemoteExec,
    Local,
    InProcess,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::UpToDate => "up-to-date",
            Outcome::Cache => "cache",
            Outcome::Remote => "remote",
            Outcome::RemoteExec => "remote-exec",
            Outcome::Local => "local",
            Outcome::InProcess => "in-process",
        }
    }
}

pub(crate) struct Build<'a> {
    pub layout: &'a Layout,
    pub opts: &'a ExecOptions,
    pub sandbox: &'a Sandboxes,
    pub build_id: &'a str,
    pub digests: DigestCache,
    pub cas: Cas,
    pub ac: ActionCache,
    pub remote: RemoteState,
    pub progress: Progress,
    sandbox_counter: AtomicUsize,
    forest_notice: AtomicBool,
    records: Mutex<Vec<ActionRecord>>,
    janitor: Janitor,
}

impl<'a> Build<'a> {
    pub fn new(
        layout: &'a Layout,
        opts: &'a ExecOptions,
        sandbox: &'a Sandboxes,
        build_id: &'a str,
        progress: Progress,
    ) -> Build<'a> {
        Build {
            layout,
            opts,
            sandbox,
            build_id,
            digests: DigestCache::load(layout.digest_cache()),
            cas: Cas::new(layout.cas_dir()),
            ac: ActionCache::new(layout.ac_dir()),
            remote: RemoteState::new(
                opts.remote.clone(),
                opts.remote_mode,
                opts.default_allow_cache_upload,
                opts.cache_policy,
            )
            .with_execution(opts.remote_exec.clone()),
            progress,
            sandbox_counter: AtomicUsize::new(0),
            forest_notice: AtomicBool::new(false),
            records: Mutex::new(Vec::new()),
            janitor: Janitor::start(layout.trash_dir()),
        }
    }
}
