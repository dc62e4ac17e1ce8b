//! The bus's periodic work, every 100 ms as Redis's clusterCron: drop
//! handshakes that took too long, connect to nodes without a link (a MEET
//! to a node met by CLUSTER MEET, else a PING), ping a node each second
//! (the one heard from the longest ago of five picked at random), ping
//! every node not heard from for half the node timeout, reopen links that
//! stopped answering, flag PFAIL a node silent for the node timeout, then
//! the failover steps (`failover`).

use commands::kernel::cluster::{flags, State};

use super::codec::mtype;
use super::{now_ms, Bus};

impl Bus {
    pub(super) fn cron(&mut self, st: &mut State) {
        self.iteration += 1;
        let now = now_ms();
        self.free_links_over_limit();
        let timeout = self.srv.settings().cluster.node_timeout_ms;
        let handshake_timeout = timeout.max(1000);
        // Handshakes that took too long.
        let mut i = 0;
        while i < st.nodes.len() {
            let n = &st.nodes[i];
            if i != st.me
                && n.flags & flags::HANDSHAKE != 0
                && now.saturating_sub(n.ctime) > handshake_timeout
            {
                let id = n.id.clone();
                st.remove_node(i);
                self.drop_links_of(&id);
                continue;
            }
            i += 1;
        }
        // Links of nodes no longer in the table (CLUSTER FORGET, RESET).
        for l in self.links.values_mut() {
            if let Some(id) = &l.node {
                if st.find(id).is_none_or(|i| i == st.me) {
                    l.dead = true;
                }
            }
        }
        // Links to open.
        for i in 0..st.nodes.len() {
            let n = &st.nodes[i];
            if i == st.me || n.flags & flags::NOADDR != 0 || n.ip.is_empty() {
                continue;
            }
            if self.outbound(&n.id).is_some() {
                continue;
            }
            let (id, ip, cport, meet) = (
                n.id.clone(),
                n.ip.clone(),
                n.cport,
                n.flags & flags::MEET != 0,
            );
            let Some(t) = self.connect(&id, &ip, cport) else {
                continue;
            };
            let old_ping = st.nodes[i].ping_sent;
            self.send_ping(st, t, if meet { mtype::MEET } else { mtype::PING });
            if old_ping != 0 {
                st.nodes[i].ping_sent = old_ping;
            }
            st.nodes[i].flags &= !flags::MEET;
        }
        // Once a second: ping the node heard from the longest ago of five.
        if self.iteration.is_multiple_of(10) && st.nodes.len() > 1 {
            let mut best: Option<(usize, u64)> = None;
            for _ in 0..5 {
                let i = (self.random() % st.nodes.len() as u64) as usize;
                let n = &st.nodes[i];
                if i == st.me
                    || n.ping_sent != 0
                    || n.flags & flags::HANDSHAKE != 0
                    || self.outbound(&n.id).is_none()
                {
                    continue;
                }
                if best.is_none_or(|(_, p)| n.pong_received < p) {
                    best = Some((i, n.pong_received));
                }
            }
            if let Some((i, _)) = best {
                if let Some(t) = self.outbound(&st.nodes[i].id.clone()) {
                    self.send_ping(st, t, mtype::PING);
                }
            }
        }
        for i in 0..st.nodes.len() {
            let n = &st.nodes[i];
            if i == st.me || n.flags & (flags::NOADDR | flags::HANDSHAKE) != 0 {
                continue;
            }
            let id = n.id.clone();
            let link = self.outbound(&id);
            if let Some(t) = link {
                let ctime = self.links[&t].ctime;
                // A link that stopped answering: reopened by the next cron.
                if now.saturating_sub(ctime) > timeout
                    && n.ping_sent != 0
                    && now.saturating_sub(n.ping_sent) > timeout / 2
                    && now.saturating_sub(n.data_received) > timeout / 2
                {
                    if let Some(l) = self.links.get_mut(&t) {
                        l.dead = true;
                    }
                } else if n.ping_sent == 0 && now.saturating_sub(n.pong_received) > timeout / 2 {
                    self.send_ping(st, t, mtype::PING);
                }
            }
            let n = &st.nodes[i];
            if n.ping_sent == 0 {
                continue;
            }
            let delay = now
                .saturating_sub(n.ping_sent)
                .min(now.saturating_sub(n.data_received));
            if delay > timeout && n.flags & (flags::PFAIL | flags::FAIL) == 0 {
                crate::notice!("*** NODE {id} possibly failing");
                st.nodes[i].flags |= flags::PFAIL;
            }
        }
        // A node flagged PFAIL here may already have enough reports.
        for i in 0..st.nodes.len() {
            if st.nodes[i].flags & flags::PFAIL != 0 {
                self.mark_failing_if_needed(st, i);
            }
        }
        self.failover_cron(st);
    }
}

impl Bus {
    /// `cluster-link-sendbuf-limit`: a link holding more unsent bytes than
    /// the limit (its peer does not read) is freed, as Redis frees it; an
    /// outbound one is dialed again by the cron.
    fn free_links_over_limit(&mut self) {
        let limit = self.srv.settings().cluster.link_sendbuf_limit;
        if limit == 0 {
            return;
        }
        for l in self.links.values_mut() {
            let used = l.pending() as u64;
            if l.dead || used <= limit {
                continue;
            }
            let node = l.node.as_deref().unwrap_or_default();
            crate::warning!(
                "Freeing cluster link({} node {node}, used memory: {used}) due to exceeding send buffer memory limit.",
                if l.inbound { "from" } else { "to" }
            );
            l.dead = true;
            self.srv
                .cluster
                .links_buffer_limit_exceeded
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
