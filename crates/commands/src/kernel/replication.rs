//! Replication identity: the replication ID pair (`master_replid`,
//! `master_replid2` and `second_repl_offset` in INFO replication). Petrel
//! does not replicate yet (issue 21): the IDs exist because INFO reports
//! them and `DEBUG CHANGE-REPL-ID` changes them, as Redis does; the
//! replication family will own the offsets and the backlog beside them.

use parking_lot::Mutex;

/// The current and previous replication IDs.
#[derive(Debug, Clone)]
pub struct ReplIds {
    /// 40 hex characters, random at startup.
    pub replid: String,
    /// The ID this server followed before, or 40 zeros.
    pub replid2: String,
    /// Offset up to which `replid2` is valid, -1 when none.
    pub second_offset: i64,
}

/// The replication ID pair, changed as a whole.
#[derive(Debug)]
pub struct Replication {
    ids: Mutex<ReplIds>,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            ids: Mutex::new(ReplIds {
                replid: crate::base::text::random_hex(40),
                replid2: "0".repeat(40),
                second_offset: -1,
            }),
        }
    }
}

impl Replication {
    pub fn ids(&self) -> ReplIds {
        self.ids.lock().clone()
    }

    /// A new random replication ID (Redis's `changeReplicationId`); the
    /// previous pair is left as it was.
    pub fn change_replid(&self) {
        self.ids.lock().replid = crate::base::text::random_hex(40);
    }
}
