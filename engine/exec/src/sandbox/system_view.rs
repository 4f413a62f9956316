//! What of the host's file system a sandboxed action sees besides its inputs: bubblewrap's
//! arguments for the system part of the view. Two views, because two kinds of user run
//! actions:
//!
//! - **local** ([`local_system_binds`]): the action runs for the user who typed the command,
//!   as under buck2, so it sees that user's `$HOME` (rustup, pyenv and other user-installed
//!   toolchains live there), all of `/etc` and `/opt`, and the absolute
//!   `[forge] sandbox_passthrough` paths — all read-only.
//! - **remote** ([`remote_system_binds`]): a worker of a shared build pool runs actions that
//!   ANY client sent, so it shows only what a toolchain needs to start and link: `/usr` (+
//!   the merged-usr links), the few `/etc` files of [`REMOTE_ETC`] (no `shadow`, no
//!   `ssl/private`, no credentials), a fresh `/proc`, `/dev` and `/tmp`. Never the worker
//!   user's home, `/root` or `/opt`: an installation outside `/usr` is shown only when the
//!   worker's operator names it (`forge-re-worker --read-only DIR`).
//!
//! docs/architecture.md ("The sandbox") lists the binds of both views.

use std::fs;
use std::path::Path;

use super::expand_home;

/// The `/etc` entries a remote action sees, each for a reason a toolchain has:
const REMOTE_ETC: &[&str] = &[
    // user and group names (`id`, `whoami`, tar and Python's `getpass`), name lookups
    "passwd",
    "group",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "resolv.conf",
    "gai.conf",
    // the dynamic loader's cache and search path
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    // Debian's `/usr/bin/cc`, `c++`, `awk`, … are links through /etc/alternatives
    "alternatives",
    // TLS trust for a tool that fetches over `--share-network` (a licence server)
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    // the host's identity and time zone, which compilers and Python read
    "os-release",
    "debian_version",
    "localtime",
    "timezone",
];

/// `/usr` and the merged-usr links (`/bin`, `/lib`, … as links into `/usr`, or directories
/// on a system that is not merged), read-only.
fn usr_binds(a: &mut Vec<String>) {
    push(a, &["--ro-bind", "/usr", "/usr"]);
    for top in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let p = format!("/{top}");
        match fs::read_link(&p) {
            Ok(target) => push(a, &["--symlink", &target.to_string_lossy(), &p]),
            Err(_) if Path::new(&p).is_dir() => push(a, &["--ro-bind", &p, &p]),
            Err(_) => {}
        }
    }
}

/// A private `/proc`, `/dev` and `/tmp`.
fn private_dirs(a: &mut Vec<String>) {
    push(a, &["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
}

fn push(a: &mut Vec<String>, xs: &[&str]) {
    a.extend(xs.iter().map(|s| s.to_string()));
}

/// The local view: `/usr`, `/etc`, `/opt`, `$HOME` and the absolute passthrough paths
/// read-only; private `/proc`, `/dev` and `/tmp`.
pub(crate) fn local_system_binds(passthrough: &[String]) -> Vec<String> {
    let mut a = Vec::new();
    usr_binds(&mut a);
    push(&mut a, &["--ro-bind", "/etc", "/etc"]);
    push(&mut a, &["--ro-bind-try", "/opt", "/opt"]);
    private_dirs(&mut a);
    if let Some(home) = std::env::var_os("HOME") {
        let home = home.to_string_lossy().into_owned();
        if home != "/" && !home.is_empty() {
            push(&mut a, &["--ro-bind-try", &home, &home]);
        }
    }
    for p in passthrough {
        if let Some(abs) = expand_home(p) {
            let abs = abs.to_string_lossy().into_owned();
            push(&mut a, &["--ro-bind-try", &abs, &abs]);
        }
    }
    a
}

/// The remote view: `/usr`, the `/etc` entries of [`REMOTE_ETC`] that exist here, private
/// `/proc`, `/dev` and `/tmp`; nothing of `$HOME`, `/root` or `/opt`.
pub(crate) fn remote_system_binds() -> Vec<String> {
    let mut a = Vec::new();
    usr_binds(&mut a);
    for entry in REMOTE_ETC {
        let p = format!("/etc/{entry}");
        // (`-try`: a host without the entry shows none; the view never gains anything else)
        push(&mut a, &["--ro-bind-try", &p, &p]);
    }
    private_dirs(&mut a);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths a view mounts (the destination of every bind and link).
    fn mounted(args: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < args.len() {
            match args[i].as_str() {
                "--ro-bind" | "--ro-bind-try" | "--bind" | "--symlink" => {
                    out.push(args[i + 2].clone());
                    i += 3;
                }
                "--proc" | "--dev" | "--tmpfs" => {
                    out.push(args[i + 1].clone());
                    i += 2;
                }
                _ => i += 1,
            }
        }
        out
    }

    #[test]
    fn the_remote_view_has_no_home_opt_or_secrets_of_etc() {
        let got = mounted(&remote_system_binds());
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        for hidden in [
            "/etc",
            "/opt",
            "/root",
            home.as_str(),
            "/etc/shadow",
            "/etc/gshadow",
            "/etc/ssl",
            "/etc/ssl/private",
            "/var",
            "/run",
        ] {
            assert!(
                !got.iter().any(|m| m == hidden),
                "{hidden} in the remote view"
            );
        }
        // Nothing is mounted above /etc's listed entries (a bind of a parent would show all).
        assert!(got.iter().all(|m| m != "/" && m != "/home"));
        assert!(got.contains(&"/usr".to_string()));
        assert!(got.contains(&"/etc/ld.so.cache".to_string()));
    }

    #[test]
    fn the_local_view_keeps_home_etc_and_opt() {
        let got = mounted(&local_system_binds(&[]));
        for shown in ["/usr", "/etc", "/opt"] {
            assert!(got.contains(&shown.to_string()), "{shown} missing");
        }
        if let Ok(home) = std::env::var("HOME") {
            if home != "/" && !home.is_empty() {
                assert!(got.contains(&home));
            }
        }
    }
}
