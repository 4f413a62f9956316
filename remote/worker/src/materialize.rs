//! Writes an action's input root (a Merkle tree of `Directory` messages in the CAS) into a
//! fresh directory. Every blob is verified against its digest by the CAS client; inputs
//! are made read-only, so an action cannot change what the next reader sees.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use forge_reapi::{Digest, GrpcRemoteCache, RemoteCache};
use prost::Message;

/// Deeper trees than this are refused: a cyclic or hostile tree must not recurse forever.
const MAX_DEPTH: usize = 256;

pub fn input_root(cas: &GrpcRemoteCache, root: &re::Digest, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest).with_context(|| format!("creating {}", dest.display()))?;
    directory(cas, root, dest, 0)
}

fn safe_name(name: &str) -> Result<&str> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        bail!("input root holds an unsafe name `{name}`");
    }
    Ok(name)
}

fn directory(cas: &GrpcRemoteCache, digest: &re::Digest, dest: &Path, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        bail!("input root is deeper than {MAX_DEPTH} directories");
    }
    let d = Digest::from_proto(Some(digest))?;
    let dir = if d.is_empty_blob() {
        re::Directory::default()
    } else {
        re::Directory::decode(cas.read_blob(&d)?.as_slice())
            .with_context(|| format!("decoding Directory {d}"))?
    };
    for f in &dir.files {
        let path = dest.join(safe_name(&f.name)?);
        let fd = Digest::from_proto(f.digest.as_ref())?;
        if fd.is_empty_blob() {
            std::fs::write(&path, b"").with_context(|| format!("writing {}", path.display()))?;
        } else {
            cas.fetch(&fd, &path)?;
        }
        let mode = if f.is_executable { 0o555 } else { 0o444 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("setting the mode of {}", path.display()))?;
    }
    for s in &dir.symlinks {
        let path = dest.join(safe_name(&s.name)?);
        std::os::unix::fs::symlink(&s.target, &path)
            .with_context(|| format!("making the symlink {}", path.display()))?;
    }
    for sub in &dir.directories {
        let path = dest.join(safe_name(&sub.name)?);
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        let Some(sd) = sub.digest.as_ref() else {
            bail!("directory `{}` has no digest", sub.name);
        };
        directory(cas, sd, &path, depth + 1)?;
    }
    Ok(())
}
