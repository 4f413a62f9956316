//! A flaky network between a client and its server, for resume and retry tests.

use std::io::Write;
use std::net::{TcpListener, TcpStream};

/// A TCP proxy in front of the server that breaks the connection once, after `cut_after`
/// bytes have flowed in one direction: a flaky network for resume/retry tests.
pub struct FlakyProxy {
    pub port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    ToClient,
}

impl FlakyProxy {
    pub fn start(upstream: u16, direction: Direction, cut_after: u64) -> FlakyProxy {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let counted = Arc::new(AtomicU64::new(0));
        let (cut2, stop2) = (cut.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = conn else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                for (from, to, dir) in [
                    (
                        client.try_clone().unwrap(),
                        server.try_clone().unwrap(),
                        Direction::ToServer,
                    ),
                    (server, client, Direction::ToClient),
                ] {
                    let (cut, counted) = (cut2.clone(), counted.clone());
                    std::thread::spawn(move || {
                        pump(from, to, dir == direction, cut_after, &cut, &counted)
                    });
                }
            }
        });
        FlakyProxy { port, cut, stop }
    }

    pub fn did_cut(&self) -> bool {
        self.cut.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    counting: bool,
    cut_after: u64,
    cut: &std::sync::atomic::AtomicBool,
    counted: &std::sync::atomic::AtomicU64,
) {
    use std::io::Read;
    use std::sync::atomic::Ordering;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if counting && !cut.load(Ordering::SeqCst) {
            let total = counted.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            if total > cut_after && !cut.swap(true, Ordering::SeqCst) {
                let _ = from.shutdown(std::net::Shutdown::Both);
                let _ = to.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

impl Drop for FlakyProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so its thread ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}
