//! The `petrel` server: startup, listeners, the acceptor, worker threads,
//! signals and shutdown. Command semantics live in crate `commands`.

pub mod alloc;
pub mod alloc_defrag;
pub mod cluster_bus;
pub mod conn;
pub mod faults;
pub mod handoff;
pub mod limits;
pub mod log;
pub mod net;
pub mod spin;
pub mod tls;
pub mod tls_bus;
pub mod tls_link;
pub mod worker;

use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use commands::kernel::config::Settings;
use commands::kernel::hub::WorkerHandle;
use commands::kernel::server::Server;
use crossbeam_channel::Sender;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::net::{Listener, Stream};
use crate::worker::{NewConn, Worker};

const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Starts the server with `settings` and blocks until it shuts down.
pub fn run(settings: Settings, config_file: Option<std::path::PathBuf>) -> Result<(), String> {
    // A supervised server stays in the foreground (as Redis).
    let supervision = commands::base::supervisor::detect(settings.supervised);
    if settings.daemonize && supervision == commands::base::supervisor::Mode::No {
        // SAFETY: called before any thread is spawned; daemon(3) forks and the
        // parent exits, the child continues with the same memory image.
        if unsafe { libc::daemon(1, 0) } != 0 {
            return Err("daemonize failed".into());
        }
    }
    log::init(settings.loglevel, &settings.logfile)
        .map_err(|e| format!("Can't open the log file: {e}"))?;
    commands::base::supervisor::start(settings.supervised, supervision);
    if settings.disable_thp {
        commands::base::thp::disable_if_always();
    }
    // Failures are logged; the server runs with the score it has.
    let _ = commands::base::oom_score::apply(
        settings.oom_score_adj,
        settings.oom_score_adj_values,
        settings.repl.replicaof.is_some(),
    );
    faults::install_panic_hook();
    // maxclients fitted to the open-file limit, as Redis does at startup.
    let mut settings = settings;
    match limits::adjust_open_files_limit(settings.maxclients) {
        Ok(m) => settings.maxclients = m,
        Err(e) => {
            warning!("{e}");
            std::process::exit(1);
        }
    }
    if !settings.pidfile.is_empty() {
        let _ = std::fs::write(&settings.pidfile, format!("{}\n", std::process::id()));
    }
    commands::base::stopwatch::calibrate();
    commands::kernel::scripting::set_log_sink(log::log);
    // Like Redis, the server works in `dir`: files it names without a path
    // (the RDB file, logs given relative) land there.
    std::env::set_current_dir(&settings.dir)
        .map_err(|e| format!("Can't chdir to '{}': {e}", settings.dir))?;
    let threads = settings.threads.max(1);
    let srv = Arc::new(commands::registry::build_server(
        settings.clone(),
        config_file,
    ));
    commands::services::replication::install(&srv);
    commands::services::acl::load_at_startup(&srv).inspect_err(|e| {
        log::log(commands::base::log::LogLevel::Warning, e);
    })?;
    // Keys expiring before the first cron tick get their `expired` events.
    commands::services::expiry::sync_expired_log(&srv);
    commands::services::cluster::load_at_startup(&srv).inspect_err(|e| {
        log::log(commands::base::log::LogLevel::Warning, e);
    })?;
    // Clients that connect before the dataset is loaded get -LOADING. With
    // `appendonly yes` the AOF is the dataset and the RDB file is ignored,
    // as Redis does. An AOF that is not there yet only gets its first
    // base (of nothing): written before the listeners open, as Redis
    // does it before it serves anyone.
    let rdb_file = commands::services::snapshot::rdb_path(&settings);
    let aof_to_load = settings.aof.enabled && commands::services::aof::exists_on_disk(&settings);
    if settings.aof.enabled && !aof_to_load {
        commands::services::aof::load_at_startup(&srv, &settings)?;
    }
    if aof_to_load || (!settings.aof.enabled && rdb_file.exists()) {
        srv.persistence.loading.active.store(true, Relaxed);
    }

    // TLS: the context is built before any listener opens; settings that
    // cannot be used end the process, as in Redis.
    if tls::in_use(&settings.tls) {
        match tls::build(&settings.tls).and_then(|c| Ok((c, tls_bus::build(&settings.tls)?))) {
            Ok((c, bus)) => {
                tls::install(Some(c));
                tls_bus::install(bus);
            }
            Err(e) => {
                warning!("{e}");
                return Err("Failed to configure TLS. Check logs for more info.".into());
            }
        }
    }
    srv.config.set_tls_hook(Box::new(tls::config_hook));
    commands::services::replication::socket::set_tls_dialer(Box::new(tls_link::dial));

    let mut listeners: Vec<Listener> = Vec::new();
    if settings.port != 0 {
        let tcp = net::bind_tcp(&settings.bind, settings.port, settings.tcp_backlog as i32)?;
        if let Some((_, a)) = tcp.first() {
            srv.tcp_port.store(a.port() as u64, Relaxed);
        }
        listeners.extend(tcp.into_iter().map(|(l, _)| Listener::Tcp(l)));
    }
    if settings.tls.port != 0 {
        let tcp = net::bind_tcp(
            &settings.bind,
            settings.tls.port,
            settings.tcp_backlog as i32,
        )?;
        listeners.extend(tcp.into_iter().map(|(l, _)| Listener::Tls(l)));
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

    // Workers, and the acceptor below, report their end to the main thread.
    let watch = faults::Watch::new();
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
        let notice = watch.notice(faults::Watched::Worker(i));
        joins.push(
            std::thread::Builder::new()
                .name(format!("petrel-worker-{i}"))
                .spawn(move || {
                    let _notice = notice;
                    worker.run()
                })
                .map_err(|e| e.to_string())?,
        );
    }

    // The cluster bus listens before clients are served.
    cluster_bus::spawn(srv.clone())?;
    spawn_signal_thread(srv.clone())?;
    spawn_cron_thread(srv.clone())?;

    notice!(
        "Petrel {} (Redis {} compatible) started: port={} tls-port={} threads={} pid={}",
        commands::PETREL_VERSION,
        commands::REDIS_VERSION,
        srv.tcp_port.load(Relaxed),
        settings.tls.port,
        threads,
        std::process::id()
    );
    notice!("Server initialized");

    let acceptor_poll = Poll::new().map_err(|e| e.to_string())?;
    let acceptor_waker =
        Arc::new(Waker::new(acceptor_poll.registry(), REBIND).map_err(|e| e.to_string())?);
    let (rebind_tx, rebind_rx) = crossbeam_channel::unbounded::<RebindRequest>();
    srv.config.set_listener_hook(Box::new(move |s: &Settings| {
        let (reply_tx, reply_rx) = crossbeam_channel::bounded(1);
        let req = RebindRequest {
            bind: s.bind.clone(),
            port: s.port,
            tls_port: s.tls.port,
            backlog: s.tcp_backlog as i32,
            reply: reply_tx,
        };
        rebind_tx
            .send(req)
            .map_err(|_| "the acceptor is not running".to_string())?;
        let _ = acceptor_waker.wake();
        reply_rx
            .recv()
            .map_err(|_| "the acceptor is not running".to_string())?
    }));
    let acceptor_srv = srv.clone();
    let acceptor = Acceptor {
        srv: acceptor_srv,
        poll: acceptor_poll,
        listeners,
        workers: conn_txs,
        rebind: rebind_rx,
    };
    let notice = watch.notice(faults::Watched::Acceptor);
    std::thread::Builder::new()
        .name("petrel-acceptor".into())
        .spawn(move || {
            let _notice = notice;
            acceptor.run()
        })
        .map_err(|e| e.to_string())?;
    let ends = watch.into_receiver();

    // Load the dataset while clients get -LOADING (a partial dataset is
    // never served: an error ends the process).
    if aof_to_load {
        let load_start = std::time::Instant::now();
        match commands::services::aof::load_at_startup(&srv, &settings) {
            Ok(Some(r)) => notice!(
                "DB loaded from append only file: {:.3} seconds ({} commands)",
                load_start.elapsed().as_secs_f64(),
                r.commands
            ),
            Ok(None) => {}
            Err(e) => {
                if !srv.shutdown_requested.load(Relaxed) {
                    warning!("{e}");
                    std::process::exit(1);
                }
            }
        }
    } else if settings.aof.enabled {
        // Started above (nothing to load).
    } else if let Err(e) = commands::services::snapshot::load_at_startup(&srv) {
        if !srv.shutdown_requested.load(Relaxed) {
            warning!("{e}");
            std::process::exit(1);
        }
    }
    srv.persistence.loading.active.store(false, Relaxed);
    notice!("Ready to accept connections");
    commands::base::supervisor::notify(if settings.repl.replicaof.is_some() {
        "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n"
    } else {
        "STATUS=Ready to accept connections\n"
    });
    commands::base::supervisor::notify("READY=1\n");
    // `replicaof` in the configuration: follow that master from now on.
    commands::services::replication::start_configured(&srv);

    wait_for_workers(&srv, joins, &ends);
    notice!("User requested shutdown...");
    commands::services::aof::flush_on_shutdown(&srv);
    if !settings.unixsocket.is_empty() {
        let _ = std::fs::remove_file(&settings.unixsocket);
    }
    if !settings.pidfile.is_empty() {
        let _ = std::fs::remove_file(&settings.pidfile);
    }
    notice!("Petrel is now ready to exit, bye bye...");
    Ok(())
}

/// Waits for the worker threads to end, asleep until a watched thread (a
/// worker or the acceptor, `ends`) reports its end. After a shutdown that
/// saved, the keyspace stays held (`services::snapshot::prepare_shutdown`),
/// so a worker that was waiting for a partition never ends: once shutdown
/// is requested and a first watched thread ended (the acceptor ends within
/// its poll period), the rest get a few seconds, then the process exits
/// without them. A worker or the acceptor that ends before shutdown ends
/// the process (`faults`).
fn wait_for_workers(
    srv: &Server,
    joins: Vec<std::thread::JoinHandle<()>>,
    ends: &crossbeam_channel::Receiver<faults::Watched>,
) {
    use crossbeam_channel::RecvTimeoutError;
    let mut running = joins.len();
    let mut deadline: Option<std::time::Instant> = None;
    while running > 0 {
        let ended = match deadline {
            None => ends.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(d) => ends.recv_deadline(d),
        };
        let who = match ended {
            Ok(who) => who,
            Err(RecvTimeoutError::Timeout) => return,
            // Every watched thread ended (and said so).
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if !srv.shutdown_requested.load(Relaxed) {
            faults::thread_died(srv, who.worker());
        }
        if let faults::Watched::Worker(_) = who {
            running -= 1;
        }
        deadline.get_or_insert_with(|| std::time::Instant::now() + Duration::from_secs(3));
    }
    for j in joins {
        let _ = j.join();
    }
}

/// Token of the acceptor's waker (CONFIG SET port/bind requests).
const REBIND: Token = Token(usize::MAX);

/// CONFIG SET port/bind, carried to the acceptor thread that owns the
/// listeners; the reply is the outcome of binding.
struct RebindRequest {
    bind: Vec<String>,
    port: u16,
    tls_port: u16,
    backlog: i32,
    reply: Sender<Result<(), String>>,
}

/// The acceptor thread: owns the listening sockets, hands accepted
/// connections to workers round-robin, and swaps the TCP listeners when
/// CONFIG SET changes `port` or `bind`.
struct Acceptor {
    srv: Arc<Server>,
    poll: Poll,
    listeners: Vec<Listener>,
    workers: Vec<(Sender<NewConn>, Arc<Waker>)>,
    rebind: crossbeam_channel::Receiver<RebindRequest>,
}

impl Acceptor {
    fn register_all(&mut self) {
        for (i, l) in self.listeners.iter_mut().enumerate() {
            let r = match l {
                Listener::Tcp(t) | Listener::Tls(t) => {
                    self.poll
                        .registry()
                        .register(t, Token(i), Interest::READABLE)
                }
                Listener::Unix(u) => self
                    .poll
                    .registry()
                    .register(u, Token(i), Interest::READABLE),
            };
            if let Err(e) = r {
                warning!("acceptor register: {e}");
            }
        }
    }

    /// Replaces the TCP listeners (plain and TLS). Like Redis, the old
    /// sockets are closed first (so the same port can be bound on other
    /// addresses); if the new ones cannot be bound the old configuration
    /// is bound again.
    fn rebind(&mut self, req: &RebindRequest) -> Result<(), String> {
        let old: Vec<_> = self
            .listeners
            .iter()
            .filter_map(|l| match l {
                Listener::Tcp(t) => t.local_addr().ok().map(|a| (a, false)),
                Listener::Tls(t) => t.local_addr().ok().map(|a| (a, true)),
                Listener::Unix(_) => None,
            })
            .collect();
        for l in &mut self.listeners {
            let _ = match l {
                Listener::Tcp(t) | Listener::Tls(t) => self.poll.registry().deregister(t),
                Listener::Unix(u) => self.poll.registry().deregister(u),
            };
        }
        self.listeners.retain(|l| matches!(l, Listener::Unix(_)));
        let bind = |port: u16| {
            if port == 0 {
                Ok(Vec::new())
            } else {
                net::bind_tcp(&req.bind, port, req.backlog)
            }
        };
        let bound = bind(req.port).and_then(|tcp| Ok((tcp, bind(req.tls_port)?)));
        let result = match bound {
            Ok((tcp, tls)) => {
                let port = tcp.first().map_or(0, |(_, a)| a.port());
                self.srv.tcp_port.store(port as u64, Relaxed);
                self.listeners
                    .extend(tcp.into_iter().map(|(l, _)| Listener::Tcp(l)));
                self.listeners
                    .extend(tls.into_iter().map(|(l, _)| Listener::Tls(l)));
                Ok(())
            }
            Err(e) => {
                warning!("CONFIG SET port/tls-port/bind: {e}");
                for (a, is_tls) in old {
                    match net::bind_tcp(&[a.ip().to_string()], a.port(), req.backlog) {
                        Ok(tcp) => self.listeners.extend(tcp.into_iter().map(|(l, _)| {
                            if is_tls {
                                Listener::Tls(l)
                            } else {
                                Listener::Tcp(l)
                            }
                        })),
                        Err(e) => warning!("Restoring listener {a}: {e}"),
                    }
                }
                Err(e)
            }
        };
        self.register_all();
        result
    }

    fn run(mut self) {
        self.register_all();
        accept_loop(self)
    }
}

fn accept_loop(mut a: Acceptor) {
    let mut events = Events::with_capacity(64);
    let mut next = 0usize;
    let srv = a.srv.clone();
    // Listeners whose last accept failed (EMFILE, ENFILE, ENOBUFS...): the
    // waiting connections stay in the kernel's backlog, and edge-triggered
    // polling reports no new readiness for them, so they are retried every
    // poll round until accepting works again. The failure is logged at most
    // once a second.
    let mut retry: Vec<usize> = Vec::new();
    let mut last_accept_warning: Option<std::time::Instant> = None;
    loop {
        if srv.shutdown_requested.load(Relaxed) {
            return;
        }
        if commands::base::fault_hooks::take(&commands::base::fault_hooks::ACCEPTOR) {
            panic!("DEBUG PANIC-THREAD acceptor");
        }
        let timeout = if retry.is_empty() { 200 } else { 20 };
        if a.poll
            .poll(&mut events, Some(Duration::from_millis(timeout)))
            .is_err()
        {
            continue;
        }
        let mut rebind = false;
        let mut ready: Vec<usize> = std::mem::take(&mut retry);
        for ev in events.iter() {
            if ev.token() == REBIND {
                rebind = true;
            } else if !ready.contains(&ev.token().0) {
                ready.push(ev.token().0);
            }
        }
        for index in ready {
            let Some(l) = a.listeners.get_mut(index) else {
                continue;
            };
            let is_tls = matches!(l, Listener::Tls(_));
            loop {
                let accepted = match l {
                    Listener::Tcp(t) | Listener::Tls(t) => t.accept().map(|(s, peer)| {
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
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let now = std::time::Instant::now();
                        if last_accept_warning
                            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1))
                        {
                            warning!("Accepting client connection: {e}");
                            last_accept_warning = Some(now);
                        }
                        retry.push(index);
                        break;
                    }
                };
                let settings = srv.settings();
                if let Stream::Tcp(t) = &stream {
                    net::tune_tcp(t, settings.tcp_keepalive);
                }
                if is_tls {
                    // The handshake runs on the worker, driven by the
                    // connection's readiness (never blocking it).
                    let Stream::Tcp(t) = stream else { continue };
                    let Some(ctx) = tls::current() else {
                        warning!("TLS connection refused: no TLS context configured");
                        continue;
                    };
                    stream = match tls::TlsStream::new(t, ctx) {
                        Ok(s) => Stream::Tls(Box::new(s)),
                        Err(e) => {
                            warning!("TLS connection refused: {e}");
                            continue;
                        }
                    };
                }
                if srv.stats.connected_clients.load(Relaxed) >= settings.maxclients {
                    let _ = stream.write(b"-ERR max number of clients reached\r\n");
                    srv.stats.rejected_connections.fetch_add(1, Relaxed);
                    continue;
                }
                // Redis 7.0: protected while the default user needs no password.
                if settings.protected_mode && srv.acl.default_user().nopass && !is_local {
                    let _ = stream.write(DENIED.as_bytes());
                    srv.stats.rejected_connections.fetch_add(1, Relaxed);
                    continue;
                }
                srv.stats.connected_clients.fetch_add(1, Relaxed);
                let (tx, waker) = &a.workers[next % a.workers.len()];
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
        if rebind {
            while let Ok(req) = a.rebind.try_recv() {
                let r = a.rebind(&req);
                let _ = req.reply.send(r);
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
            for sig in signals.forever() {
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                warning!("Received {name} scheduling shutdown...");
                // `shutdown-on-sigterm` / `shutdown-on-sigint`: by default
                // save when save points are set, as SHUTDOWN does.
                let s = srv.settings();
                let f = if sig == SIGINT {
                    s.shutdown_on_sigint
                } else {
                    s.shutdown_on_sigterm
                };
                let save = if f.save {
                    Some(true)
                } else if f.nosave {
                    Some(false)
                } else {
                    None
                };
                // As SHUTDOWN: wait for lagging replicas first (up to
                // shutdown-timeout) unless NOW; a second SIGINT meanwhile
                // goes at once, without saving.
                use commands::services::replication::shutdown_wait;
                let (save, force) = if shutdown_wait::in_progress(&srv) {
                    if sig != SIGINT {
                        continue;
                    }
                    warning!("You insist... exiting now.");
                    shutdown_wait::take_over(&srv);
                    (Some(false), true)
                } else if !f.now && s.shutdown_timeout > 0 && !shutdown_wait::ready(&srv) {
                    shutdown_wait::start(&srv, None, save, f.force, s.shutdown_timeout);
                    continue;
                } else {
                    (save, f.force)
                };
                if commands::services::snapshot::prepare_shutdown(&srv, save, force).is_err() {
                    warning!("{name} received but errors trying to shut down the server, check the logs for more information");
                    continue;
                }
                srv.shutdown_requested.store(true, Relaxed);
                srv.hub.broadcast_shutdown();
                return;
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
            faults::cron_tick(&srv);
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}
