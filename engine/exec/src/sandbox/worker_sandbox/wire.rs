//! What forge and the sandbox worker say to each other over their socket. Each message is
//! a length-prefixed frame of length-prefixed byte strings (paths, argv and environment are
//! bytes on Unix, and a 10 MB command line must pass through unchanged, so neither JSON nor
//! a line protocol fits). A request carries the action's stdout and stderr descriptors
//! (`SCM_RIGHTS` on its first byte).

use std::io::{self, Read, Write};

/// One mount of an action's view, below the project root. `src` is resolved from the real
/// project root (relative) or absolute (a passthrough's resolved path, which the worker
/// opens before the action's fresh mounts can hide it), `dst` inside the action's fresh root
/// (relative).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    pub src: Vec<u8>,
    pub dst: Vec<u8>,
    /// The mount point is a directory (else an empty file is created for it).
    pub dir: bool,
    pub writable: bool,
}

/// One action to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The project root's absolute path: the real tree there is the source of every bind,
    /// and the action sees a fresh read-only tmpfs at that path holding only the binds.
    pub root: Vec<u8>,
    /// Absolute paths the worker's bubblewrap shows that lie under `/tmp` (which each action
    /// gets fresh), shown again on top of the fresh `/tmp`.
    pub keep_under_tmp: Vec<Vec<u8>>,
    /// In mount order: a later bind may lie inside an earlier writable one.
    pub binds: Vec<Bind>,
    pub argv: Vec<Vec<u8>>,
    /// `KEY=VALUE`, the action's whole environment.
    pub env: Vec<Vec<u8>>,
}

/// How an action ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The worker took the request: from here on the action may be running.
    Accepted,
    /// The command ran; its raw wait status.
    Exited(i32),
    /// `execve` failed with this errno (nothing ran).
    ExecFailed(i32),
    /// The sandbox could not be set up (nothing ran).
    SetupFailed(String),
}

#[derive(Default)]
struct Frame(Vec<u8>);

impl Frame {
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
    }
    fn list(&mut self, items: &[Vec<u8>]) {
        self.0
            .extend_from_slice(&(items.len() as u64).to_le_bytes());
        for i in items {
            self.bytes(i);
        }
    }
}

struct Reader<'a>(&'a [u8]);

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("sandbox message: {what}"),
    )
}

impl Reader<'_> {
    fn u64(&mut self) -> io::Result<u64> {
        let (head, rest) = self.0.split_at_checked(8).ok_or_else(|| bad("truncated"))?;
        self.0 = rest;
        Ok(u64::from_le_bytes(head.try_into().expect("8 bytes")))
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = self.u64()? as usize;
        let (head, rest) = self.0.split_at_checked(n).ok_or_else(|| bad("truncated"))?;
        self.0 = rest;
        Ok(head.to_vec())
    }
    fn list(&mut self) -> io::Result<Vec<Vec<u8>>> {
        (0..self.u64()?).map(|_| self.bytes()).collect()
    }
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut f = Frame::default();
        f.bytes(&self.root);
        f.list(&self.keep_under_tmp);
        f.0.extend_from_slice(&(self.binds.len() as u64).to_le_bytes());
        for b in &self.binds {
            f.bytes(&b.src);
            f.bytes(&b.dst);
            f.0.push(u8::from(b.dir) | (u8::from(b.writable) << 1));
        }
        f.list(&self.argv);
        f.list(&self.env);
        f.0
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Request> {
        let mut r = Reader(bytes);
        let root = r.bytes()?;
        let keep_under_tmp = r.list()?;
        let mut binds = Vec::new();
        for _ in 0..r.u64()? {
            let src = r.bytes()?;
            let dst = r.bytes()?;
            let (&flags, rest) = r.0.split_first().ok_or_else(|| bad("truncated"))?;
            r.0 = rest;
            binds.push(Bind {
                src,
                dst,
                dir: flags & 1 != 0,
                writable: flags & 2 != 0,
            });
        }
        let argv = r.list()?;
        let env = r.list()?;
        Ok(Request {
            root,
            keep_under_tmp,
            binds,
            argv,
            env,
        })
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let mut f = Frame::default();
        match self {
            Reply::Accepted => f.0.push(b'A'),
            Reply::Exited(s) => {
                f.0.push(b'S');
                f.0.extend_from_slice(&s.to_le_bytes());
            }
            Reply::ExecFailed(e) => {
                f.0.push(b'X');
                f.0.extend_from_slice(&e.to_le_bytes());
            }
            Reply::SetupFailed(m) => {
                f.0.push(b'E');
                f.bytes(m.as_bytes());
            }
        }
        f.0
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Reply> {
        let (&tag, rest) = bytes.split_first().ok_or_else(|| bad("empty reply"))?;
        let int = || -> io::Result<i32> {
            Ok(i32::from_le_bytes(
                rest.get(..4)
                    .ok_or_else(|| bad("truncated"))?
                    .try_into()
                    .expect("4 bytes"),
            ))
        };
        match tag {
            b'A' => Ok(Reply::Accepted),
            b'S' => Ok(Reply::Exited(int()?)),
            b'X' => Ok(Reply::ExecFailed(int()?)),
            b'E' => Ok(Reply::SetupFailed(
                String::from_utf8_lossy(&Reader(rest).bytes()?).into_owned(),
            )),
            _ => Err(bad("unknown reply")),
        }
    }
}

/// Writes one frame (its length, then its bytes).
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    w.write_all(&(payload.len() as u64).to_le_bytes())?;
    w.write_all(payload)
}

/// Reads the rest of a frame whose 8-byte length header is `header`.
pub fn read_body(r: &mut impl Read, header: [u8; 8]) -> io::Result<Vec<u8>> {
    let mut body = vec![0; u64::from_le_bytes(header) as usize];
    r.read_exact(&mut body)?;
    Ok(body)
}

/// Reads one frame; `None` at a clean end of stream.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut header = [0u8; 8];
    match r.read_exact(&mut header) {
        Ok(()) => read_body(r, header).map(Some),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_survive_the_wire() {
        let req = Request {
            root: b"/w/p".to_vec(),
            keep_under_tmp: vec![b"/tmp/x".to_vec()],
            binds: vec![Bind {
                src: b"buck-out/forge/sandbox/1/o".to_vec(),
                dst: b"o".to_vec(),
                dir: true,
                writable: true,
            }],
            argv: vec![b"/bin/sh".to_vec(), vec![0xff, b'x']],
            env: vec![b"A=1".to_vec()],
        };
        assert_eq!(Request::decode(&req.encode()).unwrap(), req);
        for r in [
            Reply::Accepted,
            Reply::Exited(256),
            Reply::ExecFailed(7),
            Reply::SetupFailed("mount: EPERM".into()),
        ] {
            assert_eq!(Reply::decode(&r.encode()).unwrap(), r);
        }
        assert!(Request::decode(&req.encode()[..10]).is_err());
    }
}
