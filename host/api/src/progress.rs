//! Progress of long runs. The ranks' stderr goes through mpirun to the launcher, which owns
//! the terminal: a rank prints `aurora-host: progress DONE/TOTAL WHAT` lines (only when the
//! launcher asked for them with `--progress-lines`), and the launcher draws them as one
//! indicatif bar on a terminal, or as plain lines at most once a second when `--progress`
//! asked for it on a pipe (a Slurm log).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

pub const PREFIX: &str = "aurora-host: progress ";

fn line(done: u64, total: u64, what: &str) {
    crate::rank_lines::stderr_line(&format!("{PREFIX}{done}/{total} {what}"));
}

/// Polls `done()` and prints a progress line whenever it changed.
pub struct Reporter {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Reporter {
    pub fn start(what: &str, total: u64, done: impl Fn() -> u64 + Send + 'static) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let what = what.to_string();
        let thread = std::thread::spawn(move || {
            let mut last = u64::MAX;
            loop {
                let stopping = flag.load(Ordering::Relaxed);
                let now = done().min(total);
                if now != last {
                    line(now, total, &what);
                    last = now;
                }
                if stopping {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Reporter { stop, thread }
    }

    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// A counter the caller advances.
pub struct Counter {
    done: Arc<AtomicU64>,
    reporter: Reporter,
}

impl Counter {
    pub fn start(what: &str, total: u64) -> Counter {
        let done = Arc::new(AtomicU64::new(0));
        let d = done.clone();
        Counter {
            done,
            reporter: Reporter::start(what, total, move || d.load(Ordering::Relaxed)),
        }
    }

    pub fn inc(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    pub fn finish(self) {
        self.reporter.finish();
    }
}

/// A terminal stand-in for a pipe: every redraw is one plain line.
#[derive(Debug)]
struct Lines;

impl TermLike for Lines {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        if s.trim().is_empty() {
            return Ok(());
        }
        writeln!(std::io::stderr(), "{s}")
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.write_line(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The launcher's view: one bar, moved by the ranks' progress lines.
pub struct Display {
    bar: Option<(ProgressBar, String)>,
    pipe: bool,
}

impl Default for Display {
    fn default() -> Self {
        Display::new()
    }
}

impl Display {
    /// Whether the launcher shows progress: on a terminal, or when `--progress` asked.
    pub fn wanted(asked: bool) -> bool {
        asked || std::io::stderr().is_terminal()
    }

    pub fn new() -> Display {
        Display {
            bar: None,
            pipe: !std::io::stderr().is_terminal(),
        }
    }

    /// Takes a rank's stderr line; true when it was a progress line.
    pub fn take(&mut self, text: &str) -> bool {
        let Some(rest) = text.strip_prefix(PREFIX) else {
            return false;
        };
        let Some((counts, what)) = rest.split_once(' ') else {
            return true;
        };
        let Some((done, total)) = counts.split_once('/') else {
            return true;
        };
        let (Ok(done), Ok(total)) = (done.parse::<u64>(), total.parse::<u64>()) else {
            return true;
        };
        if self.bar.as_ref().is_none_or(|(_, w)| w != what) {
            self.clear();
            let target = if self.pipe {
                ProgressDrawTarget::term_like_with_hz(Box::new(Lines), 1)
            } else {
                ProgressDrawTarget::stderr()
            };
            let bar = ProgressBar::with_draw_target(Some(total), target);
            bar.set_style(
                ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} [{elapsed}]").unwrap(),
            );
            bar.set_message(what.to_string());
            self.bar = Some((bar, what.to_string()));
        }
        if let Some((bar, _)) = &self.bar {
            bar.set_position(done);
        }
        true
    }

    /// Prints a line of a rank's stderr above the bar.
    pub fn print(&self, text: &str) {
        match &self.bar {
            Some((bar, _)) if !self.pipe => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }

    /// Removes the bar before other output.
    pub fn clear(&mut self) {
        if let Some((bar, _)) = self.bar.take() {
            if self.pipe {
                bar.finish();
            } else {
                bar.finish_and_clear();
            }
        }
    }
}
