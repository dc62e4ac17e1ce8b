//! Pub/Sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBE forms,
//! PUBLISH, SPUBLISH, PUBSUB introspection.
//!
//! The registry and delivery are `kernel::pubsub`; this module keeps each
//! client's own sets (`Client::pubsub`) and the registry in step.

use crate::kernel::client::Client;
use crate::kernel::ctx::Ctx;
use crate::kernel::pubsub::{Scope, Subscriber};
use crate::kernel::spec::{flag, Channels, CommandSpec, Docs, KeyPos};

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
    Subscriber::new(&ctx.client.shared)
}

fn subscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    for ch in &args[1..] {
        if ctx.client.pubsub.channels.insert(ch.to_vec()) {
            ctx.srv.pubsub.subscribe(Scope::Channels, ch, me(ctx));
        }
        let n = total(ctx.client);
        reply_sub(ctx, b"subscribe", Some(ch), n);
    }
    ctx.client.sync_pubsub_counts();
}

fn psubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    for p in &args[1..] {
        if ctx.client.pubsub.patterns.insert(p.to_vec()) {
            ctx.srv.pubsub.subscribe(Scope::Patterns, p, me(ctx));
        }
        let n = total(ctx.client);
        reply_sub(ctx, b"psubscribe", Some(p), n);
    }
    ctx.client.sync_pubsub_counts();
}

fn ssubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    // Standalone server: every channel is in this node's slots, so the
    // cross-slot check of cluster mode cannot fail here.
    for ch in &args[1..] {
        if ctx.client.pubsub.shard_channels.insert(ch.to_vec()) {
            ctx.srv.pubsub.subscribe(Scope::Shard, ch, me(ctx));
        }
        let n = ctx.client.pubsub.shard_channels.len();
        reply_sub(ctx, b"ssubscribe", Some(ch), n);
    }
    ctx.client.sync_pubsub_counts();
}

fn unsubscribe_generic(ctx: &mut Ctx, args: &[&[u8]], which: Scope) {
    let kind: &[u8] = match which {
        Scope::Channels => b"unsubscribe",
        Scope::Patterns => b"punsubscribe",
        Scope::Shard => b"sunsubscribe",
    };
    let names: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].iter().map(|a| a.to_vec()).collect()
    } else {
        let set = match which {
            Scope::Channels => &ctx.client.pubsub.channels,
            Scope::Patterns => &ctx.client.pubsub.patterns,
            Scope::Shard => &ctx.client.pubsub.shard_channels,
        };
        set.iter().cloned().collect()
    };
    if names.is_empty() {
        let n = match which {
            Scope::Shard => ctx.client.pubsub.shard_channels.len(),
            _ => total(ctx.client),
        };
        reply_sub(ctx, kind, None, n);
    }
    for name in names {
        let set = match which {
            Scope::Channels => &mut ctx.client.pubsub.channels,
            Scope::Patterns => &mut ctx.client.pubsub.patterns,
            Scope::Shard => &mut ctx.client.pubsub.shard_channels,
        };
        if set.remove(&name) {
            ctx.srv.pubsub.unsubscribe(which, &name, ctx.client.id);
        }
        let n = match which {
            Scope::Shard => ctx.client.pubsub.shard_channels.len(),
            _ => total(ctx.client),
        };
        reply_sub(ctx, kind, Some(&name), n);
    }
    ctx.client.sync_pubsub_counts();
}

fn unsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Scope::Channels)
}
fn punsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Scope::Patterns)
}
fn sunsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_generic(ctx, args, Scope::Shard)
}

fn publish(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = ctx
        .srv
        .publish(args[1], args[2], false, ctx.client.id, ctx.out);
    ctx.srv.cluster.relay_publish(args[1], args[2], false);
    ctx.out.int(n as i64);
}

fn spublish(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = ctx
        .srv
        .publish(args[1], args[2], true, ctx.client.id, ctx.out);
    ctx.srv.cluster.relay_publish(args[1], args[2], true);
    ctx.out.int(n as i64);
}

fn pubsub_channels(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        // Redis checks the count in the handler, with this message.
        return ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "PUBSUB",
        ));
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
        channels: Channels::Subscribe,
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
        channels: Channels::PatternSubscribe,
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
        channels: Channels::Publish,
        ..CommandSpec::new("publish", 3, flag::PUBSUB | flag::LOADING | flag::STALE | flag::FAST | flag::MAY_REPLICATE, publish)
    },
    CommandSpec {
        acl: &["pubsub", "slow"],
        keys: KeyPos::range(1, -1, 1),
        docs: Docs::new("O(N) where N is the number of shard channels to subscribe to.", "Listens for messages published to shard channels."),
        channels: Channels::Subscribe,
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
        channels: Channels::Publish,
        ..CommandSpec::new("spublish", 3, flag::PUBSUB | flag::LOADING | flag::STALE | flag::FAST | flag::MAY_REPLICATE, spublish)
    },
    CommandSpec {
        docs: Docs::new("Depends on subcommand.", "A container for Pub/Sub commands."),
        handler: None,
        subcommands: PUBSUB_SUBS,
        ..CommandSpec::new("pubsub", -2, 0, pubsub_help)
    },
];
