//! TLS material for the remote-cache tests, made with the openssl CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A throwaway CA and a server certificate for localhost/127.0.0.1 signed by it, made with
/// the openssl CLI. Without openssl the test fails, unless `FORGE_ALLOW_MISSING` names
/// `openssl`: then `None` (the caller returns).
pub fn make_certs(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let ca_key = dir.join("ca.key");
    let ca = dir.join("ca.pem");
    let key = dir.join("server.key");
    let csr = dir.join("server.csr");
    let cert = dir.join("server.pem");
    let ext = dir.join("ext.cnf");
    std::fs::write(&ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let ok = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=forge test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    let _ = (&ca_key, &csr);
    if !ok {
        forge_allow_missing::missing(
            "openssl",
            "the openssl CLI cannot make a test certificate, so TLS is not tested",
        );
        return None;
    }
    Some((ca, cert, key))
}
