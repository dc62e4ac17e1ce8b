//! Replica failover in cluster mode, the part that is state only (the bus
//! sends and receives the messages, `server::cluster_bus::failover`):
//!
//! * **Votes** ([`vote`]): a master serving slots grants a replica's
//!   FAILOVER_AUTH_REQUEST under Redis 7.0's rules: the request's current
//!   epoch is not older than ours, we have not voted in this epoch yet, the
//!   requester is a replica whose master we know and see as FAIL (unless
//!   the request carries FORCEACK, a manual failover), we did not vote for
//!   a replica of that master in the last two node timeouts, and no slot
//!   the requester claims is held here at a newer config epoch.
//! * **Rank** ([`replica_rank`]): how many sibling replicas (that may fail
//!   over) announced a greater replication offset; each rank delays the
//!   election by one second.
//! * **Promotion** ([`replace_master`]): this replica becomes a master and
//!   takes every slot of its master.
//! * **Replica migration** ([`migration_target`]): a replica of a master
//!   with spare replicas moves to a master left without any.
//! * **Manual failover** ([`ManualFailover`]): CLUSTER FAILOVER's state,
//!   on the replica that runs it and on the master that pauses for it;
//!   [`failover_command`] is the command's checks and start.
//!
//! Invariants: `State::last_vote_epoch` only grows and a vote is granted at
//! most once per current epoch; a vote records the time on the failed
//! master's entry (`Node::voted_time`), so its replicas get no second vote
//! from this node within two node timeouts. `ManualFailover::end == 0`
//! means no manual failover, and then every other field is at its default.

use super::{flags, State, NO_OWNER, SLOTS};

/// CLUSTER_MF_TIMEOUT: a manual failover gives up after this long (ms).
pub const MF_TIMEOUT_MS: u64 = 5000;
/// CLUSTER_MF_PAUSE_MULT: the master pauses writes for twice that.
pub const MF_PAUSE_MULT: u64 = 2;

/// A manual failover (CLUSTER FAILOVER) in progress, on either side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManualFailover {
    /// When it times out (unix ms); 0 = none in progress.
    pub end: u64,
    /// Replica side: the election may start (the paused master's offset
    /// was reached, or FORCE).
    pub can_start: bool,
    /// Replica side: the offset the paused master announced.
    pub master_offset: Option<u64>,
    /// Master side: the replica that sent MFSTART.
    pub replica: Option<String>,
    /// Replica side: MFSTART is still to be sent (by the bus).
    pub send_mfstart: bool,
    /// A PONG to every node is due: the command took over (TAKEOVER) and
    /// the bus tells the cluster.
    pub broadcast_pong: bool,
}

/// The fields of a FAILOVER_AUTH_REQUEST a vote depends on.
pub struct AuthRequest<'a> {
    pub current_epoch: u64,
    /// The requester's config epoch (its master's).
    pub config_epoch: u64,
    /// The slots it claims, as the bus's bitmap (slot `s` is bit `s & 7`
    /// of byte `s / 8`).
    pub slots: &'a [u8],
    /// CLUSTERMSG_FLAG0_FORCEACK: a manual failover, the master may be up.
    pub force_ack: bool,
}

/// Slots node `i` serves.
pub fn num_slots(st: &State, i: usize) -> usize {
    st.owner.iter().filter(|&&o| o == i as u32).count()
}

/// The index of this node's master, if it is a replica of a known node.
pub fn my_master(st: &State) -> Option<usize> {
    let me = st.myself();
    if me.flags & flags::SLAVE == 0 {
        return None;
    }
    me.master.as_deref().and_then(|m| st.find(m))
}

/// The replicas of node `m`.
pub fn replicas_of(st: &State, m: usize) -> Vec<usize> {
    let id = &st.nodes[m].id;
    (0..st.nodes.len())
        .filter(|&i| {
            st.nodes[i].flags & flags::SLAVE != 0 && st.nodes[i].master.as_deref() == Some(id)
        })
        .collect()
}

/// Redis's clusterGetSlaveRank: the siblings (replicas of our master that
/// may fail over) with a greater replication offset than `my_offset`.
pub fn replica_rank(st: &State, my_offset: u64) -> usize {
    let Some(m) = my_master(st) else {
        return 0;
    };
    replicas_of(st, m)
        .into_iter()
        .filter(|&i| {
            i != st.me
                && st.nodes[i].flags & flags::NOFAILOVER == 0
                && st.nodes[i].repl_offset > my_offset
        })
        .count()
}

/// Decides on a FAILOVER_AUTH_REQUEST from node `requester` (see the
/// module docs). `Ok` records the vote (the caller saves nodes.conf and
/// sends the ACK); `Err(Some(why))` is a denial Redis logs, `Err(None)`
/// one it does not (this node is no voter).
pub fn vote(
    st: &mut State,
    requester: usize,
    req: &AuthRequest,
    now_ms: u64,
    node_timeout_ms: u64,
) -> Result<(), Option<String>> {
    let me = st.me;
    if !st.nodes[me].is_master() || num_slots(st, me) == 0 {
        return Err(None);
    }
    let id = st.nodes[requester].id.clone();
    if req.current_epoch < st.current_epoch {
        return Err(Some(format!(
            "Failover auth denied to {id}: reqEpoch ({}) < curEpoch({})",
            req.current_epoch, st.current_epoch
        )));
    }
    if st.last_vote_epoch == st.current_epoch {
        return Err(Some(format!(
            "Failover auth denied to {id}: already voted for epoch {}",
            st.current_epoch
        )));
    }
    let node = &st.nodes[requester];
    let master = node.master.as_deref().and_then(|m| st.find(m));
    if node.is_master() {
        return Err(Some(format!(
            "Failover auth denied to {id}: it is a master node"
        )));
    }
    let Some(m) = master else {
        return Err(Some(format!(
            "Failover auth denied to {id}: I don't know its master"
        )));
    };
    if st.nodes[m].flags & flags::FAIL == 0 && !req.force_ack {
        return Err(Some(format!(
            "Failover auth denied to {id}: its master is up"
        )));
    }
    let since = now_ms.saturating_sub(st.nodes[m].voted_time);
    if since < node_timeout_ms * 2 {
        return Err(Some(format!(
            "Failover auth denied to {id}: can't vote about this master before {} milliseconds",
            node_timeout_ms * 2 - since
        )));
    }
    for slot in 0..SLOTS {
        let claimed = req
            .slots
            .get(slot / 8)
            .is_some_and(|b| b & (1 << (slot & 7)) != 0);
        if !claimed || st.owner[slot] == NO_OWNER {
            continue;
        }
        let epoch = st.nodes[st.owner[slot] as usize].config_epoch;
        if epoch > req.config_epoch {
            return Err(Some(format!(
                "Failover auth denied to {id}: slot {slot} epoch ({epoch}) > reqEpoch ({})",
                req.config_epoch
            )));
        }
    }
    st.last_vote_epoch = st.current_epoch;
    st.nodes[m].voted_time = now_ms;
    Ok(())
}

/// Redis's clusterFailoverReplaceYourMaster, on the state: this replica
/// becomes a master and takes its master's slots. Returns the former
/// master, or None (nothing changed) when this node is no replica of a
/// known node.
pub fn replace_master(st: &mut State) -> Option<usize> {
    let old = my_master(st)?;
    let me = st.me;
    let n = &mut st.nodes[me];
    n.flags = (n.flags & !flags::SLAVE) | flags::MASTER;
    n.master = None;
    for o in st.owner.iter_mut() {
        if *o == old as u32 {
            *o = me as u32;
        }
    }
    Some(old)
}

/// CLUSTER_SLAVE_MIGRATION_DELAY: how long a master must stay orphaned
/// before a replica migrates to it (ms).
pub const MIGRATION_DELAY_MS: u64 = 5000;

/// Replicas of node `m` not flagged FAIL.
fn ok_replicas(st: &State, m: usize) -> usize {
    replicas_of(st, m)
        .into_iter()
        .filter(|&r| st.nodes[r].flags & flags::FAIL == 0)
        .count()
}

/// Replica migration (cluster-allow-replica-migration), Redis 7.0's
/// clusterCron check and clusterHandleSlaveMigration, run on a replica:
/// when a master serving slots that had replicas has none left working
/// (orphaned) for [`MIGRATION_DELAY_MS`], the replica with the smallest id
/// among those of the masters with the most working replicas (at least
/// two, and more than `barrier` for our own master) moves to it. Returns
/// the master to replicate from; keeps each node's `orphaned_time`.
/// `cluster_ok`: the cluster state is ok.
pub fn migration_target(
    st: &mut State,
    now_ms: u64,
    barrier: u32,
    cluster_ok: bool,
) -> Option<usize> {
    let mine = my_master(st)?;
    let n = st.nodes.len();
    let masters: Vec<usize> = (0..n)
        .filter(|&i| st.nodes[i].is_master() && st.nodes[i].flags & flags::FAIL == 0)
        .collect();
    let ok: Vec<usize> = (0..n)
        .map(|i| {
            if st.nodes[i].is_master() {
                ok_replicas(st, i)
            } else {
                0
            }
        })
        .collect();
    let max = masters.iter().map(|&i| ok[i]).max().unwrap_or(0);
    let orphaned = |st: &State, i: usize| {
        st.nodes[i].is_master()
            && st.nodes[i].flags & flags::FAIL == 0
            && st.nodes[i].migrate_to
            && ok[i] == 0
    };
    let any_orphan = masters
        .iter()
        .any(|&i| orphaned(st, i) && num_slots(st, i) > 0);
    let this = if masters.contains(&mine) { ok[mine] } else { 0 };
    if !any_orphan || max < 2 || this != max {
        return None;
    }
    if !cluster_ok || ok[mine] <= barrier as usize {
        return None;
    }
    let mut candidate = st.me;
    let mut target = None;
    for (i, &ok_i) in ok.iter().enumerate() {
        if orphaned(st, i) {
            if target.is_none() && num_slots(st, i) > 0 {
                target = Some(i);
            }
            if st.nodes[i].orphaned_time == 0 {
                st.nodes[i].orphaned_time = now_ms;
            }
        } else {
            st.nodes[i].orphaned_time = 0;
        }
        if st.nodes[i].is_master() && ok_i == max {
            for r in replicas_of(st, i) {
                if st.nodes[r].id < st.nodes[candidate].id {
                    candidate = r;
                }
            }
        }
    }
    let t = target?;
    (candidate == st.me && now_ms.saturating_sub(st.nodes[t].orphaned_time) > MIGRATION_DELAY_MS)
        .then_some(t)
}

/// CLUSTER FAILOVER's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Coordinated with the master (MFSTART, its offset reached).
    Default,
    /// No wait for the master's offset.
    Force,
    /// No election: a new config epoch and the slots taken at once.
    Takeover,
}

/// What the command did, for the caller to finish (outside the state
/// lock): with `promoted`, this node took over (TAKEOVER) and must stop
/// replicating; the bus is to be woken in every case.
pub struct Started {
    pub promoted: bool,
    pub log: Vec<String>,
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER] on the state: Redis 7.0's checks
/// and errors (the default mode needs the master not FAIL and its bus
/// link up), then the start of the manual failover.
pub fn failover_command(st: &mut State, mode: Mode, now_ms: u64) -> Result<Started, String> {
    if st.myself().is_master() {
        return Err("ERR You should send CLUSTER FAILOVER to a replica".into());
    }
    let Some(m) = my_master(st) else {
        return Err("ERR I'm a replica but my master is unknown to me".into());
    };
    let master = &st.nodes[m];
    if mode == Mode::Default && (master.flags & flags::FAIL != 0 || !master.connected) {
        return Err("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE".into());
    }
    st.mf = ManualFailover {
        end: now_ms + MF_TIMEOUT_MS,
        ..ManualFailover::default()
    };
    let mut log = Vec::new();
    let mut promoted = false;
    match mode {
        Mode::Takeover => {
            log.push("Taking over the master (user request).".to_string());
            if bump_epoch_without_consensus(st) {
                log.push(format!(
                    "New configEpoch set to {}",
                    st.myself().config_epoch
                ));
            }
            promoted = replace_master(st).is_some();
            // Done: the bus tells every node (clusterBroadcastPong).
            st.mf = ManualFailover {
                broadcast_pong: true,
                ..ManualFailover::default()
            };
        }
        Mode::Force => {
            log.push("Forced failover user request accepted.".to_string());
            st.mf.can_start = true;
        }
        Mode::Default => {
            log.push("Manual failover user request accepted.".to_string());
            st.mf.send_mfstart = true;
        }
    }
    Ok(Started { promoted, log })
}

/// Redis's clusterBumpConfigEpochWithoutConsensus: a new config epoch
/// unless ours is already the greatest (and not 0).
pub fn bump_epoch_without_consensus(st: &mut State) -> bool {
    st.bump_epoch()
}

#[cfg(test)]
#[path = "failover_tests.rs"]
mod tests;
