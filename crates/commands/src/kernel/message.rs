//! Messages delivered to connections owned by other worker threads: a
//! published Pub/Sub message, shared by every receiver and encoded once per
//! protocol.

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
        out.raw_push(bytes);
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
