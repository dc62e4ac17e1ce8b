//! Request parsing and reply writing throughput.
//!
//! `cargo bench -p resp --bench parse`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use resp::{encode_command, Limits, Protocol, ReplyBuf, RequestParser};
use std::hint::black_box;

fn parse_all(
    parser: &mut RequestParser,
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<(usize, usize)>,
) -> usize {
    let mut pos = 0;
    let mut n = 0;
    while let Some(p) = parser.parse(&buf[pos..], limits, args).unwrap() {
        n += args.len();
        pos += p.consumed;
    }
    n
}

fn bench_parse(c: &mut Criterion) {
    let limits = Limits::default();
    let set = encode_command(&["SET", "key:000000000042", "some-value-of-24-bytes!!"]);
    let mut pipelined = Vec::new();
    for _ in 0..16 {
        pipelined.extend_from_slice(&set);
    }
    let inline = b"SET key:000000000042 some-value-of-24-bytes!!\r\n".to_vec();

    let mut g = c.benchmark_group("parse");
    let mut parser = RequestParser::new();
    let mut args = Vec::with_capacity(8);

    g.throughput(Throughput::Elements(1));
    g.bench_function("set_3_args", |b| {
        b.iter(|| parse_all(&mut parser, black_box(&set), &limits, &mut args))
    });
    g.throughput(Throughput::Elements(16));
    g.bench_function("set_pipelined_16", |b| {
        b.iter(|| parse_all(&mut parser, black_box(&pipelined), &limits, &mut args))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("set_inline", |b| {
        b.iter(|| parse_all(&mut parser, black_box(&inline), &limits, &mut args))
    });
    // A 1 MiB value arriving in 64 KiB reads.
    let mut big = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n".to_vec();
    big.extend(std::iter::repeat_n(b'v', 1 << 20));
    big.extend_from_slice(b"\r\n");
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("set_1mib_in_64k_reads", |b| {
        b.iter_batched(
            RequestParser::new,
            |mut p| {
                let mut end = 0;
                loop {
                    end = (end + 65536).min(big.len());
                    if p.parse(black_box(&big[..end]), &limits, &mut args)
                        .unwrap()
                        .is_some()
                    {
                        break;
                    }
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn bench_reply(c: &mut Criterion) {
    let mut g = c.benchmark_group("reply");
    let mut out = ReplyBuf::with_capacity(Protocol::Resp2, 1 << 16);
    g.throughput(Throughput::Elements(16));
    g.bench_function("bulk_24b_x16", |b| {
        b.iter(|| {
            out.clear();
            for _ in 0..16 {
                out.bulk(black_box(b"some-value-of-24-bytes!!"));
            }
        })
    });
    g.bench_function("int_x16", |b| {
        b.iter(|| {
            out.clear();
            for i in 0..16i64 {
                out.int(black_box(i * 123_456_789));
            }
        })
    });
    g.bench_function("double_x16", |b| {
        b.iter(|| {
            out.clear();
            for i in 0..16 {
                out.double(black_box(f64::from(i) * 0.1));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_parse, bench_reply);
criterion_main!(benches);
