//! Failure detection's verdicts, as Redis 7.0: a node in PFAIL here
//! becomes FAIL once a majority of the masters serving slots report it
//! failing (this node then broadcasts FAIL, even as a replica), at once on
//! a FAIL message, and a failed node that answers again is cleared (a
//! master with slots only after twice the node timeout, so its replicas
//! have the time to fail over). PFAIL itself is set by the cron.
//!
//! Invariants: `myself` is never flagged FAIL; a node is never both PFAIL
//! and FAIL.

use commands::kernel::cluster::{flags, State};

use super::codec::{self, mtype, Body, Message};
use super::{now_ms, Bus};

impl Bus {
    /// A FAIL message from a known node about node `nodename`: flagged
    /// FAIL at once (PFAIL cleared), unless it is this node.
    pub(super) fn process_fail(
        &mut self,
        st: &mut State,
        sender_id: &str,
        nodename: &[u8; codec::ID_LEN],
    ) {
        let now = now_ms();
        if let Some(f) = st.find(&codec::field_text(nodename)) {
            let n = &mut st.nodes[f];
            if n.flags & (flags::FAIL | flags::MYSELF) == 0 {
                crate::notice!("FAIL message received from {sender_id} about {}", n.id);
                n.flags = (n.flags | flags::FAIL) & !flags::PFAIL;
                n.fail_time = now;
                self.save = true;
            }
        }
    }

    /// PFAIL becomes FAIL once a majority of the masters serving slots
    /// (this one included, if a master) report the node failing.
    pub(super) fn mark_failing_if_needed(&mut self, st: &mut State, n: usize) {
        let now = now_ms();
        let validity = self.srv.settings().cluster.node_timeout_ms * 2;
        let quorum = st.size() / 2 + 1;
        let node = &mut st.nodes[n];
        if node.flags & flags::PFAIL == 0 || node.flags & flags::FAIL != 0 {
            return;
        }
        node.fail_reports
            .retain(|(_, t)| now.saturating_sub(*t) <= validity);
        let mut failures = node.fail_reports.len();
        if st.nodes[st.me].is_master() {
            failures += 1;
        }
        if failures < quorum {
            return;
        }
        let node = &mut st.nodes[n];
        crate::notice!("Marking node {} as failing (quorum reached).", node.id);
        node.flags = (node.flags | flags::FAIL) & !flags::PFAIL;
        node.fail_time = now;
        let id = node.id.clone();
        // A replica that reaches the quorum broadcasts too (as 7.0 does):
        // the verdict comes from the masters' reports anyway.
        let m = codec::encode(&Message {
            header: self.header(st, mtype::FAIL),
            body: Body::Fail {
                nodename: codec::field(&id),
            },
        });
        self.broadcast(st, &m);
        self.save = true;
    }

    /// A failed node that is reachable again loses its FAIL flag: at once
    /// for a replica or a master without slots, after twice the node
    /// timeout for a master with slots.
    pub(super) fn clear_failure_if_needed(&mut self, st: &mut State, n: usize) {
        let now = now_ms();
        let timeout = self.srv.settings().cluster.node_timeout_ms;
        let serving = st.owner.contains(&(n as u32));
        let node = &mut st.nodes[n];
        if node.flags & flags::FAIL == 0 {
            return;
        }
        if !serving
            || node.flags & flags::SLAVE != 0
            || now.saturating_sub(node.fail_time) > timeout * 2
        {
            crate::notice!("Clear FAIL state for node {}: is reachable again.", node.id);
            node.flags &= !flags::FAIL;
            self.save = true;
        }
    }
}
