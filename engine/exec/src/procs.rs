//! Every action and test runs as the leader of its own process group, so forge can kill
//! everything it started — the command and whatever that command left running in the
//! background — in one call:
//! - when the command exits ([`Group::finish`]; a daemon an action forked dies with it),
//! - on a timeout,
//! - on SIGINT, SIGTERM or SIGHUP to forge ([`install_signal_handlers`]: the handler kills
//!   every live group, then forge dies of the signal as it would have),
//! - after forge itself was killed with SIGKILL, on the next start ([`reap_leftovers`]): each
//!   live group is recorded as a file under `buck-out/forge/procs/` (by the leader itself
//!   before it execs, [`crate::child_record`], and again by forge), removed when the group is
//!   killed; a file whose forge process is gone names a group to kill.
//!
//! A process that calls `setsid`/`setpgid` itself leaves the group; under bubblewrap it still
//! dies with the sandbox's PID namespace, in the symlink forest it can escape (README).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use crate::child_record::ChildRecord;

/// Live process groups, for the signal handler (which may only use async-signal-safe calls,
/// so a fixed array of atomics instead of a locked collection).
static LIVE: [AtomicI32; 1024] = [const { AtomicI32::new(0) }; 1024];

/// Start time of a process in clock ticks since boot (`/proc/<pid>/stat` field 22), which
/// tells a live process from a later one that reuses its pid.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn record_name(leader: i32) -> String {
    let me = std::process::id() as i32;
    let me_start = start_time(me).unwrap_or(0);
    let leader_start = start_time(leader).unwrap_or(0);
    format!("{me}-{me_start}-{leader}-{leader_start}")
}

/// A running process group that forge started; killed when finished or dropped.
pub struct Group {
    pgid: i32,
    slot: Option<usize>,
    record: Option<PathBuf>,
}

impl Group {
    /// Registers the group led by `leader` (spawned with `process_group(0)`).
    pub fn track(leader: u32, procs_dir: &Path) -> Group {
        let pgid = leader as i32;
        let slot = LIVE.iter().position(|s| {
            s.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        let record = procs_dir.join(record_name(pgid));
        let record = (fs::create_dir_all(procs_dir).is_ok() && fs::write(&record, b"").is_ok())
            .then_some(record);
        Group { pgid, slot, record }
    }

    /// Kills whatever is left of the group (the leader has been waited for, so its pid,
    /// which names the group, cannot have been reused while members remain).
    pub fn finish(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if self.pgid > 0 {
            // SAFETY: signals a process group forge created; ESRCH (already gone) is fine.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
        if let Some(s) = self.slot.take() {
            LIVE[s].store(0, Ordering::SeqCst);
        }
        if let Some(r) = self.record.take() {
            let _ = fs::remove_file(r);
        }
        self.pgid = 0;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns in flight (between `spawn` and [`Group::track`]) and whether a termination signal
/// has arrived: a child spawned in that window is not in [`LIVE`] yet, so the handler waits
/// for the window to close before its last kill instead of leaving that child behind.
static SPAWNING: AtomicUsize = AtomicUsize::new(0);
static DYING: AtomicBool = AtomicBool::new(false);
const TERMINATION: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn kill_live() {
    for s in &LIVE {
        let pgid = s.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    DYING.store(true, Ordering::SeqCst);
    kill_live();
    // Spawning threads block these signals, so this is never one of them: wait (bounded)
    // for their children to be tracked, then kill again.
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    for _ in 0..2000 {
        if SPAWNING.load(Ordering::SeqCst) == 0 {
            break;
        }
        // SAFETY: nanosleep is async-signal-safe.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
    kill_live();
    // Remote operations in flight are cancelled by a thread before forge ends.
    if crate::remote_cancel::hand_over(sig) {
        return;
    }
    die_of(sig);
}

/// Ends forge the way the signal asked, with the usual exit status.
pub(crate) fn die_of(sig: libc::c_int) {
    // SAFETY: restoring the default action and re-raising are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn termination_set() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in TERMINATION {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Makes `cmd` the leader of its own process group (what [`spawn_tracked`]'s group kills) and
/// has the kernel kill it when the spawning thread's process dies, so a killed forge or worker
/// leaves no command running.
pub fn own_group_dying_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe; it only asks the kernel for the parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// Spawns `cmd` as the leader of a new process group and tracks the group, with no moment in
/// which a termination signal could leave the child untracked: this thread blocks the
/// signals from before the spawn until the group is recorded (the child restores the mask
/// before it execs), and once forge is stopping no command starts.
pub fn spawn_tracked(
    cmd: &mut std::process::Command,
    procs_dir: &Path,
) -> std::io::Result<(std::process::Child, Group)> {
    use std::os::unix::process::CommandExt;
    let set = termination_set();
    // SAFETY: a zeroed sigset_t is overwritten by pthread_sigmask.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: blocks signals on the calling thread only; restored below on every path.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
    SPAWNING.fetch_add(1, Ordering::SeqCst);
    let result = if DYING.load(Ordering::SeqCst) {
        Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "forge is stopping (signal received)",
        ))
    } else {
        cmd.process_group(0);
        // The child records its own group before it execs (SIGKILL between `spawn` and
        // `Group::track` would otherwise leave the group unnamed).
        let me = std::process::id() as i32;
        let record = fs::create_dir_all(procs_dir)
            .ok()
            .and_then(|()| ChildRecord::prepare(procs_dir, me, start_time(me).unwrap_or(0)));
        // SAFETY: pthread_sigmask and the record's calls are async-signal-safe; the command
        // gets the mask forge had.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(r) = &record {
                    r.write_in_child()?;
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
                Ok(())
            });
        }
        cmd.spawn().map(|child| {
            let group = Group::track(child.id(), procs_dir);
            (child, group)
        })
    };
    SPAWNING.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: restores this thread's mask from before the spawn.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    result
}

/// SIGINT, SIGTERM and SIGHUP kill every process group forge started before forge exits.
/// (A terminal's Ctrl-C reaches only forge: actions run in their own groups.)
pub fn install_signal_handlers() {
    crate::remote_cancel::start();
    for sig in TERMINATION {
        // SAFETY: installs a handler that only makes async-signal-safe calls.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Kills the process groups that a forge process which no longer runs left behind (it was
/// killed with SIGKILL, or the machine lost power mid-build); returns how many were alive.
pub fn reap_leftovers(procs_dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(procs_dir) else {
        return 0;
    };
    let mut reaped = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let f: Vec<u64> = name.split('-').filter_map(|x| x.parse().ok()).collect();
        let [owner, owner_start, leader, leader_start] = f[..] else {
            let _ = fs::remove_file(e.path());
            continue;
        };
        if start_time(owner as i32) == Some(owner_start) {
            continue; // its forge still runs and kills it itself
        }
        // A live process with the leader's pid but another start time is someone else; a
        // dead leader whose group still has members keeps its pid reserved, so a group found
        // by that pid is the one recorded.
        let leader_now = start_time(leader as i32);
        if leader_now.is_none() || leader_now == Some(leader_start) {
            // SAFETY: signals the recorded group; ESRCH when it is gone already.
            if unsafe { libc::kill(-(leader as i32), libc::SIGKILL) } == 0 {
                reaped += 1;
            }
        }
        let _ = fs::remove_file(e.path());
    }
    reaped
}
