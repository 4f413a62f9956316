//! A TCP port nothing listens on at this moment, for the test cluster's daemons: the one the
//! kernel hands out when asked to bind 127.0.0.1:0. Released at once, so another process may
//! still take it before the daemon does; the tests' cluster accepts that small race.

use std::net::TcpListener;

use crate::Error;

/// `free-port`: the port number.
pub fn free() -> Result<String, Error> {
    let l = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::Bad(format!("free-port: cannot bind 127.0.0.1:0: {e}")))?;
    let port = l
        .local_addr()
        .map_err(|e| Error::Bad(format!("free-port: no local address: {e}")))?
        .port();
    Ok(port.to_string())
}
