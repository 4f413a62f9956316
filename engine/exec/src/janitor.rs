//! Deletes sandboxes and replaced trees off the critical path. Removing a directory can be
//! slow (file systems mounted with `discard` wait for the device on every freed block), so
//! paths are renamed into `buck-out/forge/trash/` — instant — and a background thread
//! deletes them. Whatever is left when forge exits is deleted by the next build.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};

use crate::layout::remove_any;

pub struct Janitor {
    trash: PathBuf,
    tx: Mutex<mpsc::Sender<PathBuf>>,
    counter: AtomicU64,
}

impl Janitor {
    /// Starts the deleting thread and queues what earlier builds left in the trash.
    pub fn start(trash: PathBuf) -> Janitor {
        let (tx, rx) = mpsc::channel::<PathBuf>();
        std::thread::spawn(move || {
            for path in rx {
                let _ = remove_any(&path);
            }
        });
        let _ = fs::create_dir_all(&trash);
        if let Ok(entries) = fs::read_dir(&trash) {
            for e in entries.flatten() {
                let _ = tx.send(e.path());
            }
        }
        Janitor {
            trash,
            tx: Mutex::new(tx),
            counter: AtomicU64::new(0),
        }
    }

    /// Moves `path` out of the way now and deletes it later.
    pub fn discard(&self, path: &Path) {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let dst = self
            .trash
            .join(format!("{}-{}-{n}", std::process::id(), nanos()));
        if fs::rename(path, &dst).is_ok() {
            let _ = self.tx.lock().unwrap().send(dst);
        } else {
            let _ = remove_any(path);
        }
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
