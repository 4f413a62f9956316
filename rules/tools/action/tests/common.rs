//! What the integration tests share: the `action` binary and a scratch directory.

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// Held while a test writes a script and while one starts a process: a child forked while
/// another thread holds a script open for writing would make exec'ing that script fail with
/// "Text file busy" (ETXTBSY), as the tests of one file run in parallel.
static FORK: Mutex<()> = Mutex::new(());

pub trait Run {
    /// `output()`, started under the lock above.
    fn run(&mut self) -> Output;
}

impl Run for Command {
    fn run(&mut self) -> Output {
        let child = {
            let _g = FORK.lock().unwrap_or_else(|e| e.into_inner());
            self.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        child.wait_with_output().unwrap()
    }
}

pub fn action() -> Command {
    Command::new(env!("CARGO_BIN_EXE_action"))
}

/// A fresh directory, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("forge-action-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        let _g = FORK.lock().unwrap_or_else(|e| e.into_inner());
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    /// An executable `/bin/sh` script.
    pub fn script(&self, rel: &str, body: &str) -> PathBuf {
        let p = self.write(rel, &format!("#!/bin/sh\n{body}\n"));
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    pub fn names(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
