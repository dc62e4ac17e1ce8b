//! The Pub/Sub registry: channels, patterns and shard channels mapped to
//! their subscribers (client id + owning worker), and publishing.
//!
//! PUBLISH looks the receivers up, groups them by worker, and sends each
//! worker one [`WorkerMsg::Publish`]; the owning worker encodes the message
//! for each connection's protocol (RESP2 array or RESP3 push) and applies
//! the pubsub output buffer limit. A message for the publishing client
//! itself is written straight into its reply buffer before the PUBLISH
//! reply, which is the order Redis produces.
//!
//! The three maps are [`SubscriberMap`]s, whose every block active
//! defragmentation moves in bounded steps ([`PubSub::defrag_step`], the
//! defrag thread's stage after the keyspace, holding one map's write lock
//! for at most [`DEFRAG_BUCKETS`] buckets at a time).
//!
//! Invariant: a client's own sets (`Client::pubsub`) and the registry
//! agree: every (channel, client) pair is in both or neither; the
//! connection service drops every subscription when a connection closes or
//! RESETs ([`PubSub::unsubscribe_all`]).

use std::collections::HashMap;
use std::sync::Arc;

use collections::defrag::Defrag;
use parking_lot::RwLock;

use crate::kernel::client::{ClientPubSub, ClientShared};
use crate::kernel::hub::{Hub, WorkerMsg};
use crate::kernel::message::{MessageKind, Published};
/// One map of the registry: a name and its subscribers.
pub type SubscriberMap = crate::kernel::pubsub_map::NameMap<Subscriber>;
use crate::kernel::stats::Stats;

/// Which of a client's subscription sets a (un)subscription is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Channels,
    Patterns,
    Shard,
}

/// One subscription's receiver.
#[derive(Clone, Debug)]
pub struct Subscriber {
    client_id: u64,
    worker: usize,
    /// The subscriber's shared state: its queued-message bytes and kill flag.
    shared: Arc<ClientShared>,
}

impl Subscriber {
    pub fn new(shared: &Arc<ClientShared>) -> Subscriber {
        Subscriber {
            client_id: shared.id,
            worker: shared.worker,
            shared: shared.clone(),
        }
    }

    pub fn client_id(&self) -> u64 {
        self.client_id
    }
}

/// Buckets one defrag step visits under one map's write lock: each entry
/// offers two blocks (name, subscriber vector), a few hundred nanoseconds
/// with jemalloc's query, so a step stays well inside a 100 us slice.
pub const DEFRAG_BUCKETS: usize = 64;

#[derive(Default, Debug)]
pub struct PubSub {
    channels: RwLock<SubscriberMap>,
    patterns: RwLock<SubscriberMap>,
    shard_channels: RwLock<SubscriberMap>,
}

/// Where a defrag pass over the registry stands: the map (channels,
/// patterns, shard channels) and the bucket to resume at (`None`: the map's
/// first step, which offers its bucket array).
#[derive(Default, Debug, Clone, Copy)]
pub struct PubSubDefragCursor {
    map: usize,
    bucket: Option<usize>,
}

fn add(map: &RwLock<SubscriberMap>, key: &[u8], s: Subscriber) {
    map.write().add(key, s);
}

fn remove(map: &RwLock<SubscriberMap>, key: &[u8], id: u64) {
    map.write().remove(key, |s| s.client_id == id);
}

impl PubSub {
    /// One defrag step over the registry (see the module docs): visits up
    /// to `buckets` buckets of one map under its write lock, then releases
    /// it. True when the pass over the three maps is done (the cursor is
    /// then back at the start). Subscriptions may change between steps.
    pub fn defrag_step(
        &self,
        cur: &mut PubSubDefragCursor,
        buckets: usize,
        d: &mut Defrag,
    ) -> bool {
        let map = match cur.map {
            0 => &self.channels,
            1 => &self.patterns,
            2 => &self.shard_channels,
            _ => {
                *cur = PubSubDefragCursor::default();
                return true;
            }
        };
        cur.bucket = map.write().defrag_step(cur.bucket, buckets, d);
        if cur.bucket.is_none() {
            cur.map += 1;
        }
        if cur.map >= 3 {
            *cur = PubSubDefragCursor::default();
            return true;
        }
        false
    }

    fn map(&self, scope: Scope) -> &RwLock<SubscriberMap> {
        match scope {
            Scope::Channels => &self.channels,
            Scope::Patterns => &self.patterns,
            Scope::Shard => &self.shard_channels,
        }
    }

    /// Adds a subscription (the caller added `name` to the client's own set).
    pub fn subscribe(&self, scope: Scope, name: &[u8], sub: Subscriber) {
        add(self.map(scope), name, sub);
    }

    /// Removes a subscription of client `id` (the caller removed `name`
    /// from the client's own set).
    pub fn unsubscribe(&self, scope: Scope, name: &[u8], id: u64) {
        remove(self.map(scope), name, id);
    }

    /// Drops every subscription in `subs`, the sets taken from client `id`
    /// (disconnect, RESET).
    pub fn unsubscribe_all(&self, subs: &ClientPubSub, id: u64) {
        for ch in &subs.channels {
            remove(&self.channels, ch, id);
        }
        for p in &subs.patterns {
            remove(&self.patterns, p, id);
        }
        for ch in &subs.shard_channels {
            remove(&self.shard_channels, ch, id);
        }
    }

    /// Channels with at least one subscriber matching `pattern` (all if None).
    pub fn channel_names(&self, pattern: Option<&[u8]>, shard: bool) -> Vec<Vec<u8>> {
        let map = if shard {
            self.shard_channels.read()
        } else {
            self.channels.read()
        };
        map.iter()
            .map(|(c, _)| c)
            .filter(|c| pattern.is_none_or(|p| crate::base::glob::glob_match(p, c, false)))
            .map(|c| c.to_vec())
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

    /// The subscriptions of the clients `keep` selects, per client:
    /// (client, channels, patterns, shard channels). For ACL changes that
    /// revoke channels (`services::acl`).
    #[allow(clippy::type_complexity)]
    pub fn subscriptions_where(
        &self,
        keep: impl Fn(&ClientShared) -> bool,
    ) -> Vec<(Arc<ClientShared>, Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<Vec<u8>>)> {
        let mut by_client: HashMap<u64, (Arc<ClientShared>, [Vec<Vec<u8>>; 3])> = HashMap::new();
        for (slot, map) in [&self.channels, &self.patterns, &self.shard_channels]
            .into_iter()
            .enumerate()
        {
            for (name, subs) in map.read().iter() {
                for s in subs.iter().filter(|s| keep(&s.shared)) {
                    by_client
                        .entry(s.client_id)
                        .or_insert_with(|| (s.shared.clone(), Default::default()))
                        .1[slot]
                        .push(name.to_vec());
                }
            }
        }
        by_client
            .into_values()
            .map(|(c, [ch, pat, shard])| (c, ch, pat, shard))
            .collect()
    }

    pub fn num_patterns(&self) -> usize {
        self.patterns.read().len()
    }

    /// Publishes and returns the number of receivers. Messages for `me` are
    /// encoded into `my_out` directly. `hard` is the `client-output-buffer-limit
    /// pubsub` hard limit (0 = none); a subscriber over it is disconnected
    /// (counted in `stats`).
    #[allow(clippy::too_many_arguments)]
    pub fn publish(
        &self,
        hub: &Hub,
        stats: &Stats,
        hard: u64,
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
                            stats
                                .client_output_buffer_limit_disconnections
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            hub.send(
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
                if crate::base::glob::glob_match(pat, channel, false) {
                    receivers += subs.len();
                    let msg = Arc::new(Published::new(
                        MessageKind::PMessage,
                        Some(pat.to_vec()),
                        channel,
                        payload,
                    ));
                    deliver(subs, msg, &mut batches);
                }
            }
        }
        for (worker, msg, client_ids) in batches {
            hub.send(worker, WorkerMsg::Publish { msg, client_ids });
        }
        receivers
    }
}

#[cfg(test)]
#[path = "pubsub_defrag_tests.rs"]
mod defrag_tests;
