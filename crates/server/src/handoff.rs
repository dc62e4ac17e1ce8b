//! Handing a connection over to replication: after SYNC/PSYNC a worker
//! takes the connection out of its event loop and gives the socket, in
//! blocking mode, with its unread input and unwritten output, to
//! `commands::services::replication::master`, whose threads serve the
//! replica from then on (a TLS connection keeps its session,
//! `crate::tls_link`).

use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;

use commands::kernel::server::Server;
use commands::services::replication::master::{attach, Handoff};
use commands::services::replication::socket::Socket;

use crate::conn::Conn;
use crate::net::Stream;

/// Gives `conn` (already out of its worker's poll) to replication.
pub fn replica(srv: Arc<Server>, mut conn: Conn) {
    let (unread, pending_out) = conn.take_buffers();
    let socket = match conn.stream {
        Stream::Tcp(s) => {
            let fd = s.into_raw_fd();
            // SAFETY: `into_raw_fd` gave up the mio stream's ownership of
            // the descriptor; the std stream takes it over alone.
            Socket::Tcp(unsafe { std::net::TcpStream::from_raw_fd(fd) })
        }
        Stream::Unix(s) => {
            let fd = s.into_raw_fd();
            // SAFETY: as above.
            Socket::Unix(unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) })
        }
        Stream::Tls(s) => match crate::tls_link::from_handoff(s) {
            Ok(link) => Socket::Shared(link),
            Err(e) => {
                crate::warning!(
                    "Replica id={} addr={} over TLS: {e}, closing",
                    conn.client.id,
                    conn.client.shared.addr
                );
                let mut client = conn.client;
                commands::services::connection::close(&srv, &mut client);
                srv.clients.remove(client.id);
                return;
            }
        },
    };
    attach(
        srv,
        Handoff {
            client: conn.client,
            socket,
            unread,
            pending_out,
        },
    );
}
