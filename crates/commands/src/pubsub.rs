//! Pub/Sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBE forms,
//! PUBLISH, SPUBLISH, PUBSUB introspection.
//!
//! The [`PubSub`] registry maps channels and patterns to subscribers
//! (client id + owning worker). PUBLISH looks the receivers up, groups them
//! by worker, and sends each worker one [`WorkerMsg::Publish`]; the owning
//! worker encodes the message for each connection's protocol (RESP2 array or
//! RESP3 push) and applies the pubsub output buffer limit. A message for the
//! publishing client itself is written straight into its reply buffer before
//! the PUBLISH reply, which is the order Redis produces.
//!
//! Invariants: a client's own sets (`Client::pubsub`) and the registry agree:
//! every (channel, client) pair is in both or neither; `unsubscribe_all`
//! runs when a connection closes or RESETs.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::client::{cflag, Client};
use crate::ctx::Ctx;
use crate::hub::WorkerMsg;
use crate::server::Server;
use crate::spec::{flag, CommandSpec, Docs, KeyPos};

/// Subscription sets owned by one client.
#[derive(Default, Debug)]
pub struct ClientPubSub {
    pub channels: HashSet<Vec<u8>>,
    pub patterns: HashSet<Vec<u8>>,
    pub shard_channels: HashSet<Vec<u8>>,
}

impl ClientPubSub {
    pub fn is_subscribed(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shard_channels.is_empty())
    }
}

#[derive(Clone, Debug)]
struct Subscriber {
    client_id: u64,
    worker: usize,
    /// The subscriber's shared state: its queued-message bytes and kill flag.
    shared: Arc<crate::client::ClientShared>,
}

/// Kind of delivered message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    Message,
    PMessage,
    SMessage,
}

/// One published message, shared by every receiver.
#[derive(Debug)]
pub struct Published {
    pub kind: MessageKind,
    pub pattern: Option<Vec<u8>>,
    pub channel: Vec<u8>,
    pub payload: Vec<u8>,
    resp2: std::sync::OnceLock<Vec<u8>>,
    resp3: std::sync::OnceLock<Vec<u8>>,
}

impl Published {
    pub fn new(
        kind: MessageKind,
        pattern: Option<Vec<u8>>,
        channel: &[u8],
        payload: &[u8],
    ) -> Published {
        Published {
            kind,
            pattern,
            channel: channel.to_vec(),
            payload: payload.to_vec(),
            resp2: Default::default(),
            resp3: Default::default(),
        }
    }
}

impl Published {
    /// Bytes this message takes in a subscriber's queue or output buffer
    /// (RESP2 size; RESP3 differs by one byte).
    pub fn approx_len(&self) -> usize {
        let bulk = |n: usize| n + 5 + n.checked_ilog10().unwrap_or(0) as usize + 1;
        let kind = match self.kind {
            MessageKind::Message => 7,
            MessageKind::SMessage => 8,
            MessageKind::PMessage => 8,
        };
        4 + bulk(kind)
            + bulk(self.channel.len())
            + bulk(self.payload.len())
            + self.pattern.as_ref().map_or(0, |p| bulk(p.len()))
    }

    /// Appends the message for a connection (push in RESP3, array in RESP2).
    /// Each protocol's bytes are built once and copied to every receiver.
    pub fn encode(&self, out: &mut resp::ReplyBuf) {
        let proto = out.protocol();
        let cache = if proto == resp::Protocol::Resp3 {
            &self.resp3
        } else {
            &self.resp2
        };
        let bytes = cache.get_or_init(|| {
            let mut b = resp::ReplyBuf::new(proto);
            self.encode_into(&mut b);
            b.take()
        });
        out.raw(bytes);
    }

    fn encode_into(&self, out: &mut resp::ReplyBuf) {
        match self.kind {
            MessageKind::Message | MessageKind::SMessage => {
                out.push_len(3);
                out.bulk(if self.kind == MessageKind::Message {
                    &b"message"[..]
                } else {
                    &b"smessage"[..]
                });
            }
            MessageKind::PMessage => {
                out.push_len(4);
                out.bulk(b"pmessage");
                out.bulk(self.pattern.as_deref().unwrap_or(b""));
            }
        }
        out.bulk(&self.channel);
        out.bulk(&self.payload);
    }
}

#[derive(Default, Debug)]
pub struct PubSub {
    channels: RwLock<HashMap<Vec<u8>, Vec<Subscriber>>>,
    patterns: RwLock<HashMap<Vec<u8>, Vec<Subscriber>>>,
    shard_channels: RwLock<HashMap<Vec<u8>, Vec<Subscriber>>>,
}

type SubscriberMap = RwLock<HashMap<Vec<u8>, Vec<Subscriber>>>;

fn add(map: &SubscriberMap, key: &[u8], s: Subscriber) {
    map.write().entry(key.to_vec()).or_default().push(s);
}

fn remove(map: &SubscriberMap, key: &[u8], id: u64) {
    let mut m = map.write();
    if let Some(v) = m.get_mut(key) {
        v.retain(|s| s.client_id != id);
        if v.is_empty() {
            m.remove(key);
        }
    }
}

impl PubSub {
    /// Channels with at least one subscriber matching `pattern` (all if None).
    pub fn channel_names(&self, pattern: Option<&[u8]>, shard: bool) -> Vec<Vec<u8>> {
        let map = if shard {
            self.shard_channels.read()
        } else {
            self.channels.read()
        };
        map.keys()
            .filter(|c| pattern.is_none_or(|p| crate::glob::glob_match(p, c, false)))
            .cloned()
            .collect()
    }

    pub fn num_sub(&self, channel: &[u8], shard: bool) -> usize {
        let map = if shard {
            self.shard_channels.read()
        } else {
            self.channels.read()
        };
        map.get(channel).map_or(0, |v| v.len())
    }

    pub fn num_patterns(&self) -> usize {
        self.patterns.read().len()
    }

    /// Publishes and returns the number of receivers. Messages for `me` are
    /// encoded into `my_out` directly.
    pub fn publish(
        &self,
        srv: &Server,
        channel: &[u8],
        payload: &[u8],
        shard: bool,
        me: u64,
        my_out: &mut resp::ReplyBuf,
    ) -> usize {
        let mut receivers = 0;
        // `client-output-buffer-limit pubsub` hard limit, applied to the bytes
        // queued for a subscriber (in its worker's inbox and in its output
        // buffer), so a subscriber that stops reading is cut off by the
        // publishers and queued memory stays bounded.
        let hard = srv.config.get().output_pubsub.hard;
        let mut batches: Vec<(usize, Arc<Published>, Vec<u64>)> = Vec::new();
        let mut deliver =
            |subs: &[Subscriber],
             msg: Arc<Published>,
             batches: &mut Vec<(usize, Arc<Published>, Vec<u64>)>| {
                for s in subs {
                    if s.client_id == me {
                        msg.encode(my_out);
                        continue;
                    }
                    if !s.shared.queue_pubsub_bytes(msg.approx_len() as u64, hard) {
                        if !s
                            .shared
                            .killed
                            .swap(true, std::sync::atomic::Ordering::AcqRel)
                        {
                            srv.stats
                                .client_output_buffer_limit_disconnections
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            srv.hub.send(
                                s.worker,
                                WorkerMsg::Poke {
                                    client_id: s.client_id,
                                },
                            );
                        }
                        continue;
                    }
                    match batches
                        .iter_mut()
                        .find(|(w, m, _)| *w == s.worker && Arc::ptr_eq(m, &msg))
                    {
                        Some((_, _, ids)) => ids.push(s.client_id),
                        None => batches.push((s.worker, msg.clone(), vec![s.client_id])),
                    }
                }
            };
        let direct = if shard {
            self.shard_channels.read()
        } else {
            self.channels.read()
        };
        if let Some(subs) = direct.get(channel) {
            receivers += subs.len();
            let kind = if shard {
                MessageKind::SMessage
            } else {
                MessageKind::Message
            };
            let msg = Arc::new(Published::new(kind, None, channel, payload));
            deliver(subs, msg, &mut batches);
        }
        drop(direct);
        if !shard {
            let pats = self.patterns.read();
            for (pat, subs) in pats.iter() {
                if crate::glob::glob_match(pat, channel, false) {
                    receivers += subs.len();
                    let msg = Arc::new(Published::new(
                        MessageKind::PMessage,
                        Some(pat.clone()),
                        channel,
                        payload,
                    ));
                    deliver(subs, msg, &mut batches);
                }
            }
        }
        for (worker, msg, client_ids) in batches {
            srv.hub.send(worker, WorkerMsg::Publish { msg, client_ids });
        }
        receivers
    }
}

/// Drops every subscription of a client (disconnect, RESET).
pub fn unsubscribe_all(srv: &Server, c: &mut Client) {
    let ps = std::mem::take(&mut c.pubsub);
    for ch in &ps.channels {
        remove(&srv.pubsub.channels, ch, c.id);
    }
    for p in &ps.patterns {
        remove(&srv.pubsub.patterns, p, c.id);
    }
    for ch in &ps.shard_channels {
        remove(&srv.pubsub.shard_channels, ch, c.id);
    }
    sync_counts(c);
}

fn sync_counts(c: &Client) {
    let sh = &c.shared;
    sh.sub.store(c.pubsub.channels.len() as u32, Relaxed);
    sh.psub.store(c.pubsub.patterns.len() as u32, Relaxed);
    sh.ssub.store(c.pubsub.shard_channels.len() as u32, Relaxed);
    sh.set_flag(cflag::PUBSUB, c.pubsub.is_subscribed());
}

fn total(c: &Client) -> usize {
    c.pubsub.channels.len() + c.pubsub.patterns.len()
}

fn reply_sub(ctx: &mut Ctx, kind: &[u8], name: Option<&[u8]>, count: usize) {
    ctx.out.push_len(3);
    ctx.out.bulk(kind);
    match name {
        Some(n) => ctx.out.bulk(n),
        None => ctx.out.null_bulk(),
    }
    ctx.out.int(count as i64);
}

fn me(ctx: &Ctx) -> Subscriber {
    Subscriber {
        client_id: ctx.client.id,
        worker: ctx.client.shared.worker,
        shared: ctx.client.shared.clone(),
    }
}

fn subscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    for ch in &args[1..] {
        if ctx.client.pubsub.channels.insert(ch.to_vec()) {
            add(&ctx.srv.pubsub.channels, ch, me(ctx));
        }
        let n = total(ctx.client);
        reply_sub(ctx, b"subscribe", Some(ch), n);
    }
    sync_counts(ctx.client);
}

fn psubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    for p in &args[1..] {
        if ctx.client.pubsub.patterns.insert(p.to_vec()) {
            add(&ctx.srv.pubsub.patterns, p, me(ctx));
        }
        let n = total(ctx.client);
        reply_sub(ctx, b"psubscribe", Some(p), n);
    }
    sync_counts(ctx.client);
}

fn ssubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    // Standalone server: every channel is in this node's slots, so the
    // cross-slot check of cluster mode cannot fail here.
    for ch in &args[1..] {
        if ctx.client.pubsub.shard_channels.insert(ch.to_vec()) {
            add(&ctx.srv.pubsub.shard_channels, ch, me(ctx));
        }
        let n = ctx.client.pubsub.shard_channels.len();
        reply_sub(ctx, b"ssubscribe", Some(ch), n);
    }
    sync_counts(ctx.client);
}

#[derive(Clone, Copy)]
enum Which {
    Channels,
    Patterns,
    Shard,
}

fn unsubscribe_generic(ctx: &mut Ctx, args: &[&[u8]], which: Which) {
    let (kind, map): (&[u8], &SubscriberMap) = match which {
        Which::Channels => (b"unsubscribe", &ctx.srv.pubsub.channels),
        Which::Patterns => (b"punsubscribe", &ctx.srv.pubsub.patterns),
        Which::Shard => (b"sunsubscribe", &ctx.srv.pubsub.shard_channels),
    };
    let names: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].iter().map(|a| a.to_vec()).collect()
    } else {
        let set = match which {
            Which::Channels => &ctx.client.pubsub.channels,
            Which::Patterns => &ctx.client.pubsub.patterns,
            Which::Shard => &ctx.client.pubsub.shard_channels,
        };
        set.iter().cloned().collect()
    };
    if names.is_empty() {
        let n = match which {
            Which::Shard => ctx.client.pubsub.shard_channels.len(),
            _ => total(ctx.client),
        };
        reply_sub(ctx, kind, None, n);
    }
    for name in names {
        let set = match which {
            Which::Channels => &mut ctx.client.pubsub.channels,
            Which::Patterns => &mut ctx.client.pubsub.patterns,
            Which::Shard => &mut ctx.client.pubsub.shard_channels,
        };
        if set.remove(&name) {
            remove(map, &name, ctx.client.id);
        }
        let n = match which {
            Which::Shard => ctx.client.pubsub.shard_channels.len(),
            _ => total(ctx.client),
        };
        reply_sub(ctx, kind, Some(&name), n);
    }
    sync_counts(ctx.client);
}

fn unsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Which::Channels)
}
fn punsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Which::Patterns)
}
fn sunsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Which::Shard)
}

fn publish(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let n = srv
        .pubsub
        .publish(srv, args[1], args[2], false, ctx.client.id, ctx.out);
    ctx.out.int(n as i64);
}

fn spublish(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let n = srv
        .pubsub
        .publish(srv, args[1], args[2], true, ctx.client.id, ctx.out);
    ctx.out.int(n as i64);
}

fn pubsub_channels(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return ctx.wrong_arity();
    }
    let shard = ctx
        .srv
        .table
        .get(ctx.cmd_index)
        .full_name
        .ends_with("shardchannels");
    let names = ctx.srv.pubsub.channel_names(args.get(2).copied(), shard);
    ctx.bulk_array(&names);
}

fn pubsub_numsub(ctx: &mut Ctx, args: &[&[u8]]) {
    let shard = ctx
        .srv
        .table
        .get(ctx.cmd_index)
        .full_name
        .ends_with("shardnumsub");
    // Redis 7.0 answers a flat array even in RESP3.
    ctx.out.array_len(2 * (args.len() - 2));
    for ch in &args[2..] {
        ctx.out.bulk(ch);
        ctx.out.int(ctx.srv.pubsub.num_sub(ch, shard) as i64);
    }
}

fn pubsub_numpat(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.srv.pubsub.num_patterns() as i64);
}

fn pubsub_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    let lines = [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    ];
    ctx.out.array_len(lines.len());
    for l in lines {
        ctx.out.simple(l);
    }
}

const SUBSCRIBER_FLAGS: u32 =
    flag::PUBSUB | flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::SUBSCRIBED_OK;

const PUBSUB_SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)", "Returns the active channels."),
        ..CommandSpec::new("channels", -2, flag::PUBSUB | flag::LOADING | flag::STALE, pubsub_channels)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new("O(1)", "Returns helpful text about the different subcommands."),
        ..CommandSpec::new("help", 2, flag::LOADING | flag::STALE, pubsub_help)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(1)", "Returns a count of unique pattern subscriptions."),
        ..CommandSpec::new("numpat", 2, flag::PUBSUB | flag::LOADING | flag::STALE, pubsub_numpat)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) for the NUMSUB subcommand, where N is the number of requested channels", "Returns a count of subscribers to channels."),
        ..CommandSpec::new("numsub", -2, flag::PUBSUB | flag::LOADING | flag::STALE, pubsub_numsub)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).", "Returns the active shard channels."),
        ..CommandSpec::new("shardchannels", -2, flag::PUBSUB | flag::LOADING | flag::STALE, pubsub_channels)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels", "Returns the count of subscribers of shard channels."),
        ..CommandSpec::new("shardnumsub", -2, flag::PUBSUB | flag::LOADING | flag::STALE, pubsub_numsub)
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of channels to subscribe to.", "Listens for messages published to channels."),
        ..CommandSpec::new("subscribe", -2, SUBSCRIBER_FLAGS, subscribe)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of clients already subscribed to a channel.", "Stops listening to messages posted to channels."),
        ..CommandSpec::new("unsubscribe", -1, SUBSCRIBER_FLAGS, unsubscribe)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of patterns to subscribe to.", "Listens for messages published to channels that match one or more patterns."),
        ..CommandSpec::new("psubscribe", -2, SUBSCRIBER_FLAGS, psubscribe)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        docs: Docs::new("O(N) where N is the number of patterns to unsubscribe.", "Stops listening to messages published to channels that match one or more patterns."),
        ..CommandSpec::new("punsubscribe", -1, SUBSCRIBER_FLAGS, punsubscribe)
    },
    CommandSpec {
        acl: &["pubsub", "fast"],
        docs: Docs::new("O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).", "Posts a message to a channel."),
        ..CommandSpec::new("publish", 3, flag::PUBSUB | flag::LOADING | flag::STALE | flag::FAST | flag::MAY_REPLICATE, publish)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        keys: KeyPos::range(1, -1, 1),
        docs: Docs::new("O(N) where N is the number of shard channels to subscribe to.", "Listens for messages published to shard channels."),
        ..CommandSpec::new("ssubscribe", -2, SUBSCRIBER_FLAGS, ssubscribe)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        keys: KeyPos::range(1, -1, 1),
        docs: Docs::new("O(N) where N is the number of clients already subscribed to a shard channel.", "Stops listening to messages posted to shard channels."),
        ..CommandSpec::new("sunsubscribe", -1, SUBSCRIBER_FLAGS, sunsubscribe)
    },
    CommandSpec {
        acl: &["pubsub", "fast"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(N) where N is the number of clients subscribed to the receiving shard channel.", "Post a message to a shard channel"),
        ..CommandSpec::new("spublish", 3, flag::PUBSUB | flag::LOADING | flag::STALE | flag::FAST | flag::MAY_REPLICATE, spublish)
    },
    CommandSpec {
        docs: Docs::new("Depends on subcommand.", "A container for Pub/Sub commands."),
        handler: None,
        subcommands: PUBSUB_SUBS,
        ..CommandSpec::new("pubsub", -2, 0, pubsub_help)
    },
];
