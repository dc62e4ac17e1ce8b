#!/usr/bin/env python3
"""Load the data sets of examples/memory.rs into a fresh redis-server and
print used_memory per element (delta over the empty server).

    python3 crates/collections/examples/redis_memory.py [--server redis-server]

Each data set goes into its own fresh server (save and appendonly off) so
deltas do not mix; RESP is streamed through `redis-cli --pipe`.
"""
import argparse
import socket
import subprocess
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def info_mem(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "memory"],
                         capture_output=True, text=True).stdout
    d = {}
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            d[k] = v.strip()
    return int(d["used_memory"]), int(d["used_memory_rss"])


def run(server, name, n, gen, extra_conf=()):
    port = free_port()
    p = subprocess.Popen([server, "--port", str(port), "--save", "", "--appendonly", "no",
                          *extra_conf], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        before, rss0 = info_mem(port)
        cli = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        buf = []
        for cmd in gen():
            buf.append(cmd)
            if len(buf) >= 1000:
                cli.stdin.write(b"".join(buf))
                buf = []
        cli.stdin.write(b"".join(buf))
        cli.stdin.close()
        cli.wait()
        after, rss1 = info_mem(port)
        enc = subprocess.run(["redis-cli", "-p", str(port), "object", "encoding", "k"],
                             capture_output=True, text=True).stdout.strip()
        print(f"| {name} | {n} | {(after - before) / n:.1f} | {(rss1 - rss0) / n:.1f} | {enc} |",
              flush=True)
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default="redis-server")
    a = ap.parse_args()
    M = 1_000_000

    def hash_big():
        for i in range(0, M, 100):
            args = []
            for j in range(i, i + 100):
                args += [f"field:{j}", f"value:{j}"]
            yield resp("HSET", "k", *args)

    def hash_big60():
        for i in range(0, M, 100):
            args = []
            for j in range(i, i + 100):
                args += [f"f{j:07}", "v" * 60]
            yield resp("HSET", "k", *args)

    def set_big():
        for i in range(0, M, 100):
            yield resp("SADD", "k", *[f"member:{j}" for j in range(i, i + 100)])

    def zset_big():
        for i in range(0, M, 100):
            args = []
            for j in range(i, i + 100):
                args += [(j * 7919) % 1000003, f"member:{j}"]
            yield resp("ZADD", "k", *args)

    def list_big():
        for i in range(0, 10 * M, 1000):
            yield resp("RPUSH", "k", *[j % 10000 for j in range(i, i + 1000)])

    def small_hashes():
        yield resp("HSET", "k", "f0", "x")
        for i in range(M):
            args = []
            for j in range(10):
                args += [f"f{j}", f"value:{i}:{j}"]
            yield resp("HSET", f"h:{i}", *args)

    def small_sets():
        yield resp("SADD", "k", "m")
        for i in range(M):
            yield resp("SADD", f"s:{i}", *[f"m:{i}:{j}" for j in range(10)])

    print("| data set | elements | used_memory/elem | RSS/elem | encoding |")
    print("|---|---|---|---|---|")
    run(a.server, "hash 1M fields", M, hash_big)
    run(a.server, "hash 1M fields, 8 B field + 60 B value", M, hash_big60)
    run(a.server, "set 1M members", M, set_big)
    run(a.server, "zset 1M members", M, zset_big)
    run(a.server, "list 10M small elements", 10 * M, list_big)
    run(a.server, "1M small hashes x 10 fields, per key", M, small_hashes)
    run(a.server, "1M small sets x 10 members, per key", M, small_sets)


if __name__ == "__main__":
    main()
