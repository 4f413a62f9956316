//! What the user sees while a build runs: on a terminal a live line (actions done/total and
//! what is running for how long), otherwise plain lines on stderr.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown (`ExecOptions::console`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConsoleMode {
    /// Live display when stderr is a terminal, plain lines otherwise.
    #[default]
    Auto,
    /// Always the live display.
    Fancy,
    /// One line per executed command.
    Plain,
    /// Only errors and warnings.
    Quiet,
}

pub struct Progress {
    mode: ConsoleMode,
    bar: Option<ProgressBar>,
    plain: bool,
    running: Mutex<BTreeMap<usize, (String, Instant)>>,
    total: Mutex<usize>,
    done: Mutex<usize>,
}

impl Progress {
    pub fn new(mode: ConsoleMode) -> Progress {
        let total = 0;
        let fancy = match mode {
            ConsoleMode::Auto => std::io::stderr().is_terminal(),
            ConsoleMode::Fancy => true,
            ConsoleMode::Plain | ConsoleMode::Quiet => false,
        };
        let bar = fancy.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg}")
                    .expect("valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress {
            mode,
            bar,
            plain: mode == ConsoleMode::Plain
                || (mode == ConsoleMode::Auto && !std::io::stderr().is_terminal()),
            running: Mutex::new(BTreeMap::new()),
            total: Mutex::new(total),
            done: Mutex::new(0),
        }
    }

    pub fn mode(&self) -> ConsoleMode {
        self.mode
    }

    pub fn set_total(&self, total: usize) {
        *self.total.lock().unwrap() = total;
        *self.done.lock().unwrap() = 0;
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(0);
        }
    }

    /// Prints a line to stderr without tearing the live display.
    pub fn println(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    pub fn started(&self, id: usize, name: String) {
        self.running
            .lock()
            .unwrap()
            .insert(id, (name, Instant::now()));
    }

    /// `executor` is what happened (`local`, `cache`, ...); only real work gets a plain line.
    pub fn finished(&self, id: usize, executor: &str) {
        let entry = self.running.lock().unwrap().remove(&id);
        let mut done = self.done.lock().unwrap();
        *done += 1;
        if let Some(bar) = &self.bar {
            bar.set_position(*done as u64);
        } else if self.plain && executor != "up-to-date" && executor != "in-process" {
            if let Some((name, start)) = entry {
                // One write per line: stderr is unbuffered, and a formatted eprintln! costs a
                // system call per piece.
                let line = format!(
                    "[{}/{}] {executor} {name} ({:.1}s)\n",
                    *done,
                    *self.total.lock().unwrap(),
                    start.elapsed().as_secs_f64()
                );
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
        }
    }

    /// Refreshes the list of running actions on the live display.
    pub fn tick(&self) {
        let Some(bar) = &self.bar else { return };
        let running = self.running.lock().unwrap();
        let text: Vec<String> = running
            .values()
            .map(|(name, start)| format!("{name} {:.1}s", start.elapsed().as_secs_f64()))
            .collect();
        bar.set_message(text.join(" | "));
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
