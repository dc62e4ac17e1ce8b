//! Replica elections and manual failover on the bus, as Redis 7.0 (the
//! rules on state are `commands::kernel::cluster::failover`).
//!
//! * **Election** ([`Bus::handle_replica_failover`], every cron and on
//!   each vote): a replica whose master is FAIL (or that runs a manual
//!   failover allowed to start; with `cluster-replica-no-failover`, only
//!   then: it shows the `nofailover` flag) and whose data is recent enough
//!   (`cluster-replica-validity-factor`) schedules an election 500 ms +
//!   0-500 ms + rank × 1 s ahead (rank: siblings with a greater
//!   replication offset; a manual failover starts at once) and tells its
//!   siblings its offset (PONG). When the time comes it takes a new
//!   current epoch and broadcasts FAILOVER_AUTH_REQUEST (FORCEACK in a
//!   manual failover); once the masters serving slots granted it a
//!   majority of FAILOVER_AUTH_ACKs, it takes that epoch as its config
//!   epoch, becomes a master with its master's slots (replication: the
//!   promotion of REPLICAOF NO ONE, so siblings continue by partial
//!   resync) and broadcasts a PONG; the other nodes move the slots to it
//!   by config epoch, and its siblings, seeing their master lose its last
//!   slot, follow it (`gossip::update_slots`). An election not won within
//!   max(2 × node timeout, 2 s) expires and may be retried after twice
//!   that.
//! * **Votes**: FAILOVER_AUTH_REQUEST goes through `failover::vote`.
//! * **Manual failover**: CLUSTER FAILOVER (the command sets
//!   `State::mf`) makes the bus send MFSTART to the master, which pauses
//!   client writes for twice the manual failover timeout and pings the
//!   replica every cron with its offset and the PAUSED flag; once the
//!   replica processed that offset the election starts. FORCE skips the
//!   wait, TAKEOVER (done by the command) skips the election. It times out
//!   after 5 s; the master's pause ends with it.
//!
//! * **Replica migration**: each cron, a replica may move to an orphaned
//!   master (`failover::migration_target`).
//!
//! Invariants: one election at a time (`Election`), its votes counted
//! only from masters serving slots, for its epoch or a newer one; the
//! promotion of the replication side happens after the state lock is
//! released (`Bus::promote`).

use commands::kernel::cluster::failover::{self as kf, AuthRequest, MF_PAUSE_MULT, MF_TIMEOUT_MS};
use commands::kernel::cluster::{flags, State};
use commands::kernel::server::{Pause, PausePurpose};

use super::codec::{self, mflags0, mtype, Body, Header, Message};
use super::{now_ms, Bus};

/// An election's progress (Redis's failover_auth_* fields).
#[derive(Default)]
pub(super) struct Election {
    /// When the election starts, or started (ms).
    auth_time: u64,
    /// Votes received.
    auth_count: usize,
    /// The request was sent.
    auth_sent: bool,
    auth_rank: usize,
    /// The epoch the request was sent for.
    auth_epoch: u64,
    /// Why the last step could not fail over, and when that was logged.
    cant_reason: Option<&'static str>,
    cant_logged: u64,
}

/// Redis's CLUSTER_CANT_FAILOVER_RELOG_PERIOD (ms).
const RELOG_MS: u64 = 10_000;

impl Bus {
    /// The replication offset this node announces: what it processed as
    /// a replica, its own as a master.
    pub(super) fn my_repl_offset(&self, st: &State) -> u64 {
        let r = &self.srv.replication;
        if st.myself().flags & flags::SLAVE != 0 {
            r.replica.offset.load(std::sync::atomic::Ordering::Relaxed)
        } else {
            r.master.offset()
        }
    }

    /// Every message from a known node: its replication offset, and for
    /// a replica in a manual failover the offset its paused master sent.
    pub(super) fn note_offset(&mut self, st: &mut State, s: usize, h: &Header) {
        st.nodes[s].repl_offset = h.offset;
        st.nodes[s].repl_offset_time = now_ms();
        if st.mf.end != 0
            && kf::my_master(st) == Some(s)
            && h.mflags[0] & mflags0::PAUSED != 0
            && st.mf.master_offset.is_none()
        {
            st.mf.master_offset = Some(h.offset);
            crate::notice!(
                "Received replication offset for paused master manual failover: {}",
                h.offset
            );
        }
    }

    /// FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK and MFSTART from known
    /// node `s` on link `t`.
    pub(super) fn process_failover_message(
        &mut self,
        st: &mut State,
        t: usize,
        s: usize,
        h: &Header,
    ) {
        let now = now_ms();
        match h.mtype {
            mtype::FAILOVER_AUTH_REQUEST => {
                let timeout = self.srv.settings().cluster.node_timeout_ms;
                let req = AuthRequest {
                    current_epoch: h.current_epoch,
                    config_epoch: h.config_epoch,
                    slots: &h.myslots[..],
                    force_ack: h.mflags[0] & mflags0::FORCEACK != 0,
                };
                match kf::vote(st, s, &req, now, timeout) {
                    Ok(()) => {
                        // The vote is on disk (nodes.conf, synced) before
                        // it leaves, as Redis saves before its reply is
                        // written: a restart cannot vote twice in this
                        // epoch. A vote that cannot be saved is not sent.
                        if let Err(e) = self.srv.cluster.save_locked(st) {
                            crate::warning!(
                                "Can't update the cluster config file: {e}; the failover auth is not sent"
                            );
                            return;
                        }
                        let msg = self.empty_message(st, mtype::FAILOVER_AUTH_ACK);
                        let link = self.outbound(&st.nodes[s].id).unwrap_or(t);
                        self.send(link, &msg);
                        crate::warning!(
                            "Failover auth granted to {} for epoch {}",
                            st.nodes[s].id,
                            st.current_epoch
                        );
                    }
                    Err(Some(why)) => crate::warning!("{why}"),
                    Err(None) => {}
                }
            }
            // A vote counts from a master serving slots, for our epoch.
            mtype::FAILOVER_AUTH_ACK
                if st.nodes[s].is_master()
                    && kf::num_slots(st, s) > 0
                    && h.current_epoch >= self.election.auth_epoch =>
            {
                self.election.auth_count += 1;
                self.handle_replica_failover(st);
            }
            mtype::MFSTART => {
                let me = st.me;
                if !st.nodes[me].is_master()
                    || st.nodes[s].flags & flags::SLAVE == 0
                    || st.nodes[s].master.as_deref() != Some(st.nodes[me].id.as_str())
                {
                    return;
                }
                self.reset_manual_failover(st);
                st.mf.end = now + MF_TIMEOUT_MS;
                st.mf.replica = Some(st.nodes[s].id.clone());
                // Writes pause, under the failover's own purpose: a
                // CLIENT UNPAUSE does not end it (Redis 7.0).
                let until = now + MF_TIMEOUT_MS * MF_PAUSE_MULT;
                let p = Pause {
                    until_ms: until,
                    all: false,
                };
                self.srv.set_pause_for(PausePurpose::ClusterFailover, p);
                self.srv
                    .cluster
                    .mf_pausing
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                crate::notice!("Manual failover requested by replica {}.", st.nodes[s].id);
                // Our offset, with PAUSED, at once.
                self.send_ping(st, t, mtype::PING);
            }
            _ => {}
        }
    }

    /// A message of type `ty` with no body (FAILOVER_AUTH_*, MFSTART).
    fn empty_message(&self, st: &State, ty: u16) -> Vec<u8> {
        let mut header = self.header(st, ty);
        if ty == mtype::FAILOVER_AUTH_REQUEST && st.mf.end != 0 {
            header.mflags[0] |= mflags0::FORCEACK;
        }
        codec::encode(&Message {
            header,
            body: Body::Raw(Vec::new()),
        })
    }

    /// A PONG to every node (or only to the replicas of our shard).
    pub(super) fn broadcast_pong(&mut self, st: &State, shard_replicas_only: bool) {
        let me = &st.nodes[st.me];
        let shard_master = if me.is_master() {
            Some(me.id.clone())
        } else {
            me.master.clone()
        };
        let targets: Vec<usize> = st
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| *i != st.me && n.flags & (flags::HANDSHAKE | flags::NOADDR) == 0)
            .filter(|(_, n)| {
                !shard_replicas_only
                    || (n.flags & flags::SLAVE != 0
                        && n.master.is_some()
                        && n.master == shard_master)
            })
            .filter_map(|(_, n)| self.outbound(&n.id))
            .collect();
        for t in targets {
            let msg = self.ping_message(st, mtype::PONG);
            self.send(t, &msg);
        }
    }

    /// Redis's clusterSetMaster: this node becomes a replica of node `m`
    /// and replicates from it (once the state is unlocked).
    pub(super) fn set_my_master(&mut self, st: &mut State, m: usize) {
        let me = st.me;
        if m == me {
            return;
        }
        let (ip, port, id) = (
            st.nodes[m].ip.clone(),
            st.nodes[m].port,
            st.nodes[m].id.clone(),
        );
        let n = &mut st.nodes[me];
        if n.is_master() {
            n.flags = (n.flags & !flags::MASTER) | flags::SLAVE;
            st.migrating.clear();
            st.importing.clear();
        }
        st.nodes[me].master = Some(id);
        self.replicaof = Some((ip, port));
        self.promote = false;
        self.save = true;
        self.reset_manual_failover(st);
    }

    /// Redis's resetManualFailover: the master side lifts its pause.
    pub(super) fn reset_manual_failover(&mut self, st: &mut State) {
        if st.mf.replica.is_some() {
            self.srv
                .set_pause_for(PausePurpose::ClusterFailover, Pause::default());
        }
        st.mf = kf::ManualFailover {
            broadcast_pong: st.mf.broadcast_pong,
            ..kf::ManualFailover::default()
        };
        self.srv
            .cluster
            .mf_pausing
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// The failover part of the cron: manual failover timeout and steps,
    /// then the election.
    pub(super) fn failover_cron(&mut self, st: &mut State) {
        let now = now_ms();
        // cluster-replica-no-failover shows as the nofailover flag.
        let me = st.me;
        let was = st.nodes[me].flags;
        if self.srv.settings().cluster.replica_no_failover {
            st.nodes[me].flags |= flags::NOFAILOVER;
        } else {
            st.nodes[me].flags &= !flags::NOFAILOVER;
        }
        if st.nodes[me].flags != was {
            self.save = true;
        }
        if st.mf.end != 0 && st.mf.end < now {
            crate::warning!("Manual failover timed out.");
            self.reset_manual_failover(st);
        }
        if std::mem::take(&mut st.mf.send_mfstart) {
            // No link to the master: nothing is sent and it times out.
            if let Some(t) = kf::my_master(st).and_then(|m| self.outbound(&st.nodes[m].id)) {
                let msg = self.empty_message(st, mtype::MFSTART);
                self.send(t, &msg);
            }
        }
        if std::mem::take(&mut st.mf.broadcast_pong) {
            self.broadcast_pong(st, false);
        }
        if st.myself().is_master() {
            // The replica in a manual failover gets our offset each time.
            if st.mf.end != 0 {
                if let Some(t) = st.mf.replica.clone().and_then(|r| self.outbound(&r)) {
                    self.send_ping(st, t, mtype::PING);
                }
            }
            return;
        }
        if st.mf.end != 0
            && !st.mf.can_start
            && st.mf.master_offset == Some(self.my_repl_offset(st))
        {
            st.mf.can_start = true;
            crate::warning!("All master replication stream processed, manual failover can start.");
        }
        self.handle_replica_failover(st);
        let settings = self.srv.settings();
        let c = &settings.cluster;
        if c.allow_replica_migration && st.myself().flags & flags::SLAVE != 0 {
            let ok = st.is_ok(c.require_full_coverage);
            if let Some(t) = kf::migration_target(st, now, c.migration_barrier, ok) {
                crate::notice!("Migrating to orphaned master {}", st.nodes[t].id);
                self.set_my_master(st, t);
            }
        }
    }

    /// Redis's clusterHandleSlaveFailover (see the module docs).
    pub(super) fn handle_replica_failover(&mut self, st: &mut State) {
        let now = now_ms();
        let s = self.srv.settings();
        let timeout = s.cluster.node_timeout_ms;
        let manual = st.mf.end != 0 && st.mf.can_start;
        let auth_timeout = (timeout * 2).max(2000);
        let auth_retry = auth_timeout * 2;
        let Some(m) = kf::my_master(st) else {
            self.election.cant_reason = None;
            return;
        };
        if st.myself().is_master()
            || (st.nodes[m].flags & flags::FAIL == 0 && !manual)
            || (s.cluster.replica_no_failover && !manual)
            || kf::num_slots(st, m) == 0
        {
            self.election.cant_reason = None;
            return;
        }
        // How old our data is: since the link went down (or the last
        // bytes, while it is up), less the node timeout.
        let side = &self.srv.replication.replica;
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        let since = if side.link_up.load(relaxed) {
            side.last_io_ms.load(relaxed)
        } else {
            side.down_since_ms.load(relaxed)
        };
        let mut data_age = now.saturating_sub(since);
        if data_age > timeout {
            data_age -= timeout;
        }
        let factor = s.cluster.replica_validity_factor as u64;
        if factor != 0 && data_age > s.repl.ping_period * 1000 + timeout * factor && !manual {
            return self.cant_failover(st, m, "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.");
        }
        let e = &mut self.election;
        let auth_age = now.saturating_sub(e.auth_time);
        if now >= e.auth_time && auth_age > auth_retry {
            let my_offset = self.my_repl_offset(st);
            let jitter = self.random() % 500;
            let rank = kf::replica_rank(st, my_offset);
            let e = &mut self.election;
            e.auth_count = 0;
            e.auth_sent = false;
            e.auth_rank = rank;
            e.auth_time = now + 500 + jitter + rank as u64 * 1000;
            if st.mf.end != 0 {
                e.auth_time = now;
                e.auth_rank = 0;
            }
            crate::warning!(
                "Start of election delayed for {} milliseconds (rank #{}, offset {}).",
                e.auth_time - now,
                e.auth_rank,
                my_offset
            );
            // Our siblings learn our offset (their rank).
            self.broadcast_pong(st, true);
            if st.mf.end == 0 {
                return;
            }
        }
        if !self.election.auth_sent && st.mf.end == 0 {
            let rank = kf::replica_rank(st, self.my_repl_offset(st));
            let e = &mut self.election;
            if rank > e.auth_rank {
                let added = (rank - e.auth_rank) as u64 * 1000;
                e.auth_time += added;
                e.auth_rank = rank;
                crate::warning!(
                    "Replica rank updated to #{rank}, added {added} milliseconds of delay."
                );
            }
        }
        let e = &self.election;
        if now < e.auth_time {
            return self.cant_failover(
                st,
                m,
                "Waiting the delay before I can start a new failover.",
            );
        }
        if now - e.auth_time > auth_timeout {
            return self.cant_failover(st, m, "Failover attempt expired.");
        }
        if !e.auth_sent {
            st.current_epoch += 1;
            self.election.auth_epoch = st.current_epoch;
            crate::warning!(
                "Starting a failover election for epoch {}.",
                st.current_epoch
            );
            let msg = self.empty_message(st, mtype::FAILOVER_AUTH_REQUEST);
            self.broadcast(st, &msg);
            self.election.auth_sent = true;
            self.save = true;
            return;
        }
        let needed = st.size() / 2 + 1;
        if self.election.auth_count >= needed {
            crate::warning!("Failover election won: I'm the new master.");
            let me = st.me;
            if st.nodes[me].config_epoch < self.election.auth_epoch {
                st.nodes[me].config_epoch = self.election.auth_epoch;
                crate::warning!(
                    "configEpoch set to {} after successful failover",
                    self.election.auth_epoch
                );
            }
            self.replace_my_master(st);
        } else {
            self.cant_failover(st, m, "Waiting for votes, but majority still not reached.");
        }
    }

    /// Redis's clusterLogCantFailover: a reason logged when it changes or
    /// every 10 s, not in the first node timeout + 5 s after the master
    /// failed.
    fn cant_failover(&mut self, st: &State, m: usize, why: &'static str) {
        let now = now_ms();
        let timeout = self.srv.settings().cluster.node_timeout_ms;
        let e = &mut self.election;
        if e.cant_reason == Some(why) && now.saturating_sub(e.cant_logged) < RELOG_MS {
            return;
        }
        e.cant_reason = Some(why);
        let m = &st.nodes[m];
        if m.flags & flags::FAIL != 0 && now.saturating_sub(m.fail_time) < timeout + 5000 {
            return;
        }
        e.cant_logged = now;
        crate::notice!("Currently unable to failover: {why}");
    }

    /// Redis's clusterFailoverReplaceYourMaster: master with our master's
    /// slots, replication promoted, every node told.
    pub(super) fn replace_my_master(&mut self, st: &mut State) {
        if kf::replace_master(st).is_none() {
            return;
        }
        self.promote = true;
        self.replicaof = None;
        self.save = true;
        self.broadcast_pong(st, false);
        self.reset_manual_failover(st);
    }
}
