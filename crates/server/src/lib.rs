//! The `petrel` server: startup, listeners, the acceptor, worker threads,
//! signals and shutdown. Command semantics live in crate `commands`.

pub mod alloc;
pub mod conn;
pub mod log;
pub mod net;
pub mod worker;

use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use commands::config::Settings;
use commands::hub::WorkerHandle;
use commands::server::Server;
use crossbeam_channel::Sender;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::net::{Listener, Stream};
use crate::worker::{NewConn, Worker};

const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Starts the server with `settings` and blocks until it shuts down.
pub fn run(settings: Settings, config_file: Option<std::path::PathBuf>) -> Result<(), String> {
    if settings.daemonize {
        // SAFETY: called before any thread is spawned; daemon(3) forks and the
        // parent exits, the child continues with the same memory image.
        if unsafe { libc::daemon(1, 0) } != 0 {
            return Err("daemonize failed".into());
        }
    }
    log::init(settings.loglevel, &settings.logfile)
        .map_err(|e| format!("Can't open the log file: {e}"))?;
    if !settings.pidfile.is_empty() {
        let _ = std::fs::write(&settings.pidfile, format!("{}\n", std::process::id()));
    }
    commands::stopwatch::calibrate();
    let threads = settings.threads.max(1);
    let srv = Arc::new(Server::new(settings.clone(), config_file));

    let mut listeners: Vec<Listener> = Vec::new();
    if settings.port != 0 {
        let tcp = net::bind_tcp(&settings.bind, settings.port, settings.tcp_backlog as i32)?;
        if let Some((_, a)) = tcp.first() {
            srv.tcp_port.store(a.port() as u64, Relaxed);
        }
        listeners.extend(tcp.into_iter().map(|(l, _)| Listener::Tcp(l)));
    }
    if !settings.unixsocket.is_empty() {
        listeners.push(Listener::Unix(net::bind_unix(
            &settings.unixsocket,
            settings.unixsocketperm,
        )?));
    }
    if listeners.is_empty() {
        return Err("Configured to not listen anywhere, exiting.".into());
    }

    // Workers.
    let mut conn_txs: Vec<(Sender<NewConn>, Arc<Waker>)> = Vec::new();
    let mut joins = Vec::new();
    for i in 0..threads {
        let poll = Poll::new().map_err(|e| e.to_string())?;
        let waker = Worker::make_waker(&poll).map_err(|e| e.to_string())?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let (ctx, crx) = crossbeam_channel::unbounded();
        let w2 = waker.clone();
        srv.hub.register(WorkerHandle {
            tx,
            wake: Arc::new(move || drop(w2.wake())),
        });
        conn_txs.push((ctx, waker));
        let worker = Worker::new(i, srv.clone(), poll, rx, crx);
        joins.push(
            std::thread::Builder::new()
                .name(format!("petrel-worker-{i}"))
                .spawn(move || worker.run())
                .map_err(|e| e.to_string())?,
        );
    }

    spawn_signal_thread(srv.clone())?;
    spawn_cron_thread(srv.clone())?;

    notice!(
        "Petrel {} (Redis {} compatible) started: port={} threads={} pid={}",
        commands::PETREL_VERSION,
        commands::REDIS_VERSION,
        srv.tcp_port.load(Relaxed),
        threads,
        std::process::id()
    );
    notice!("Ready to accept connections");

    let acceptor_srv = srv.clone();
    std::thread::Builder::new()
        .name("petrel-acceptor".into())
        .spawn(move || accept_loop(acceptor_srv, listeners, conn_txs))
        .map_err(|e| e.to_string())?;

    for j in joins {
        let _ = j.join();
    }
    notice!("User requested shutdown...");
    if !settings.unixsocket.is_empty() {
        let _ = std::fs::remove_file(&settings.unixsocket);
    }
    if !settings.pidfile.is_empty() {
        let _ = std::fs::remove_file(&settings.pidfile);
    }
    notice!("Petrel is now ready to exit, bye bye...");
    Ok(())
}

fn accept_loop(
    srv: Arc<Server>,
    mut listeners: Vec<Listener>,
    workers: Vec<(Sender<NewConn>, Arc<Waker>)>,
) {
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            warning!("acceptor poll: {e}");
            return;
        }
    };
    for (i, l) in listeners.iter_mut().enumerate() {
        let r = match l {
            Listener::Tcp(t) => poll.registry().register(t, Token(i), Interest::READABLE),
            Listener::Unix(u) => poll.registry().register(u, Token(i), Interest::READABLE),
        };
        if let Err(e) = r {
            warning!("acceptor register: {e}");
        }
    }
    let mut events = Events::with_capacity(64);
    let mut next = 0usize;
    loop {
        if srv.shutdown_requested.load(Relaxed) {
            return;
        }
        if poll
            .poll(&mut events, Some(Duration::from_millis(200)))
            .is_err()
        {
            continue;
        }
        for ev in events.iter() {
            let l = &mut listeners[ev.token().0];
            loop {
                let accepted = match l {
                    Listener::Tcp(t) => t.accept().map(|(s, peer)| {
                        let local = s
                            .local_addr()
                            .map(|a| worker::peer_string(&a))
                            .unwrap_or_default();
                        let is_local = net::is_loopback(&peer);
                        (
                            Stream::Tcp(s),
                            worker::peer_string(&peer),
                            local,
                            false,
                            is_local,
                        )
                    }),
                    Listener::Unix(u) => u.accept().map(|(s, _)| {
                        let path = srv.settings().unixsocket.clone();
                        (Stream::Unix(s), format!("{path}:0"), path, true, true)
                    }),
                };
                let (mut stream, peer, local, is_unix, is_local) = match accepted {
                    Ok(x) => x,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        warning!("Accepting client connection: {e}");
                        break;
                    }
                };
                let settings = srv.settings();
                if let Stream::Tcp(t) = &stream {
                    net::tune_tcp(t, settings.tcp_keepalive);
                }
                if srv.stats.connected_clients.load(Relaxed) >= settings.maxclients {
                    let _ = stream.write(b"-ERR max number of clients reached\r\n");
                    srv.stats.rejected_connections.fetch_add(1, Relaxed);
                    continue;
                }
                if settings.protected_mode && settings.requirepass.is_empty() && !is_local {
                    let _ = stream.write(DENIED.as_bytes());
                    srv.stats.rejected_connections.fetch_add(1, Relaxed);
                    continue;
                }
                srv.stats.connected_clients.fetch_add(1, Relaxed);
                let (tx, waker) = &workers[next % workers.len()];
                next = next.wrapping_add(1);
                if tx
                    .send(NewConn {
                        stream,
                        peer,
                        local,
                        is_unix,
                        is_local,
                    })
                    .is_ok()
                {
                    let _ = waker.wake();
                } else {
                    srv.stats.connected_clients.fetch_sub(1, Relaxed);
                }
            }
        }
    }
}

fn spawn_signal_thread(srv: Arc<Server>) -> Result<(), String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("petrel-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                warning!("Received {name} scheduling shutdown...");
                srv.shutdown_requested.store(true, Relaxed);
                srv.hub.broadcast_shutdown();
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Background periodic work (like Redis's serverCron), at `hz` times a second.
fn spawn_cron_thread(srv: Arc<Server>) -> Result<(), String> {
    std::thread::Builder::new()
        .name("petrel-cron".into())
        .spawn(move || loop {
            let hz = srv.settings().hz.max(1);
            std::thread::sleep(Duration::from_millis(1000 / hz));
            if srv.shutdown_requested.load(Relaxed) {
                return;
            }
            commands::cron::tick(&srv);
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}
