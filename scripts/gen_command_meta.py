#!/usr/bin/env python3
"""Regenerates crates/commands/src/kernel/redis_meta.rs from a running Redis 7.0.

The file holds the interface facts clients parse from `COMMAND INFO` and
`COMMAND DOCS` (tips, key specifications, since/group/doc flags,
deprecation, history and argument trees) for every command and subcommand
petrel implements. Summary and complexity prose are NOT taken from Redis:
petrel keeps its own in the `cmd!` rows (see "Which source wins" in
crates/commands/src/kernel/spec.rs).

Usage: start redis-server 7.0 and petrel, then
    scripts/gen_command_meta.py REDIS_PORT PETREL_PORT > crates/commands/src/kernel/redis_meta.rs
It also prints to stderr every difference in arity, flags, key range and
ACL categories, which must be fixed in the `cmd!` rows by hand.
"""
import socket
import sys


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")
        self.cmd("HELLO", "3")

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t in (b"+",):
            return ("simple", rest.decode())
        if t == b"-":
            return ("error", rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            d = self.f.read(n + 2)[:-2]
            return d.decode()
        if t == b"_":
            return None
        if t in (b"*", b"~"):
            n = int(rest)
            return [self.read() for _ in range(n)]
        if t == b"%":
            n = int(rest)
            return [(self.read(), self.read()) for _ in range(n)]
        raise ValueError(line)


def s(v):
    """Plain text of a simple or bulk string."""
    return v[1] if isinstance(v, tuple) else v


def q(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def strs(items):
    return "&[" + ", ".join(q(s(i)) for i in items) + "]"


ARG_TYPES = {
    "string": "String",
    "integer": "Integer",
    "double": "Double",
    "key": "Key",
    "pattern": "Pattern",
    "unix-time": "UnixTime",
    "pure-token": "PureToken",
    "oneof": "OneOf",
    "block": "Block",
}


def arg(a):
    d = dict(a)
    name, typ = d.pop("name"), d.pop("type")
    if typ == "key":
        out = "Arg::key(%s, %d)" % (q(name), d.pop("key_spec_index"))
    else:
        out = "Arg::new(%s, ArgType::%s)" % (q(name), ARG_TYPES[typ])
        if "key_spec_index" in d:
            out += ".key_spec_index(%d)" % d.pop("key_spec_index")
    for field in ("token", "summary", "since", "deprecated_since"):
        if field in d:
            out += ".%s(%s)" % (field, q(d.pop(field)))
    for f in d.pop("flags", []):
        out += ".%s()" % s(f)
    if "arguments" in d:
        out += ".of(&[" + ", ".join(arg(x) for x in d.pop("arguments")) + "])"
    assert not d, (name, d)
    return out


def key_spec(ks):
    d = dict(ks)
    bs, fk = dict(d["begin_search"]), dict(d["find_keys"])
    bspec = dict(bs["spec"])
    if bs["type"] == "index":
        begin = "BeginSearch::Index(%d)" % bspec["index"]
    elif bs["type"] == "keyword":
        begin = "BeginSearch::Keyword { keyword: %s, startfrom: %d }" % (
            q(bspec["keyword"]),
            bspec["startfrom"],
        )
    else:
        begin = "BeginSearch::Unknown"
    fspec = dict(fk["spec"])
    if fk["type"] == "range":
        find = "FindKeys::Range { lastkey: %d, keystep: %d, limit: %d }" % (
            fspec["lastkey"],
            fspec["keystep"],
            fspec["limit"],
        )
    elif fk["type"] == "keynum":
        find = "FindKeys::Keynum { keynumidx: %d, firstkey: %d, keystep: %d }" % (
            fspec["keynumidx"],
            fspec["firstkey"],
            fspec["keystep"],
        )
    else:
        find = "FindKeys::Unknown"
    return "KeySpec { notes: %s, flags: %s, begin: %s, find: %s }" % (
        q(d.get("notes", "")),
        strs(d["flags"]),
        begin,
        find,
    )


def meta(name, info, docs):
    d = dict(docs)
    fields = [
        "name: %s" % q(name),
        "tips: %s" % strs(info[7]),
        "key_specs: &[%s]" % ", ".join(key_spec(k) for k in info[8]),
        "since: %s" % q(d["since"]),
        "group: %s" % q(d["group"]),
        "doc_flags: %s" % strs(d.get("doc_flags", [])),
        "deprecated_since: %s" % q(d.get("deprecated_since", "")),
        "replaced_by: %s" % q(d.get("replaced_by", "")),
        "history: &[%s]"
        % ", ".join("(%s, %s)" % (q(v), q(t)) for v, t in d.get("history", [])),
        "args: &[%s]" % ", ".join(arg(a) for a in d.get("arguments", [])),
    ]
    return "    Meta { " + ", ".join(fields) + " },"


WITHSCORE = ("zrank", "zrevrank")


def main():
    redis, petrel = Conn(int(sys.argv[1])), Conn(int(sys.argv[2]))
    names = []
    for top in petrel.cmd("COMMAND", "LIST"):
        names.append(top)
        pinfo = petrel.cmd("COMMAND", "INFO", top)[0]
        names += [sub[0] for sub in pinfo[9]]
    rows = []
    for name in sorted(set(names)):
        rinfo = redis.cmd("COMMAND", "INFO", name)[0]
        if rinfo is None:
            print("not in redis: %s" % name, file=sys.stderr)
            continue
        pinfo = petrel.cmd("COMMAND", "INFO", name)[0]
        for i, what in enumerate(["name", "arity", "flags", "first", "last", "step", "acl"]):
            a, b = pinfo[i], rinfo[i]
            if isinstance(a, list):
                a, b = sorted(map(s, a)), sorted(map(s, b))
            if a != b:
                print("%s %s: petrel %r redis %r" % (name, what, a, b), file=sys.stderr)
        rdocs = dict(redis.cmd("COMMAND", "DOCS", name))[name]
        pdocs = dict(dict(petrel.cmd("COMMAND", "DOCS", name)).get(name, []))
        if not pdocs.get("summary") or ("complexity" in dict(rdocs)) != bool(pdocs.get("complexity")):
            print("prose missing: %s summary=%r complexity=%r redis_has_complexity=%s"
                  % (name, pdocs.get("summary"), pdocs.get("complexity"), "complexity" in dict(rdocs)),
                  file=sys.stderr)
        if name in WITHSCORE:
            # Petrel implements Redis 7.2's ZRANK/ZREVRANK WITHSCORE (arity
            # -3 instead of 3): document the argument as Redis 7.2 does.
            rdocs = rdocs + [("history", [("7.2.0", "Added the optional `WITHSCORE` argument.")])]
            d = dict(rdocs)
            d["arguments"] = d["arguments"] + [[
                ("name", "withscore"), ("type", "pure-token"), ("token", "WITHSCORE"),
                ("since", "7.2.0"), ("flags", [("simple", "optional")])]]
            rdocs = list(d.items())
        rows.append(meta(name, rinfo, rdocs))
    print(HEADER + "\n".join(rows) + "\n];")


HEADER = """\
//! GENERATED by `scripts/gen_command_meta.py` from Redis 7.0.15's own
//! `COMMAND INFO` / `COMMAND DOCS` replies: do not edit by hand, regenerate.
//!
//! The interface facts clients parse (tips, key specifications, since,
//! group, doc flags, deprecation, history and argument trees) for every
//! command and subcommand petrel implements, sorted by full name. Summary
//! and complexity prose stay in the family modules' `cmd!` rows.

use crate::kernel::spec::{Arg, ArgType, BeginSearch, FindKeys, KeySpec};
use crate::kernel::spec::Meta;

pub const META: &[Meta] = &[
"""

if __name__ == "__main__":
    main()
