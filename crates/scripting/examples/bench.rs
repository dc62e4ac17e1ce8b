//! Cost of one `redis.call` round trip through the engine (with a host
//! that answers `+OK` without doing anything), of a 10-call script, and of
//! compiling + caching a new script. Run with
//! `cargo run --release -p scripting --example bench`.

use std::time::{Duration, Instant};

use resp::{Protocol, ReplyBuf};
use scripting::{BusyAction, CallContext, EngineConfig, Host, LogLevel, ScriptEngine};

struct NullHost;

impl Host for NullHost {
    fn call(&mut self, _argv: &[&[u8]], _ctx: CallContext, out: &mut ReplyBuf) {
        out.ok();
    }
    fn log(&mut self, _level: LogLevel, _msg: &[u8]) {}
    fn acl_check(&mut self, _argv: &[&[u8]]) -> Option<bool> {
        Some(true)
    }
    fn busy(&mut self, _elapsed: Duration) -> BusyAction {
        BusyAction::Continue
    }
}

fn per_run(engine: &mut ScriptEngine, body: &[u8], n: u32) -> f64 {
    let sha = engine.load(body).unwrap();
    let mut out = ReplyBuf::new(Protocol::Resp2);
    let keys: [&[u8]; 1] = [b"key:1"];
    let args: [&[u8]; 1] = [b"value"];
    let t = Instant::now();
    for _ in 0..n {
        out.clear();
        engine.run(&mut NullHost, &sha, &keys, &args, &mut out);
    }
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

fn main() {
    let mut engine = ScriptEngine::new(EngineConfig::default());
    let n = 200_000;
    let empty = per_run(&mut engine, b"return 1", n);
    let one = per_run(
        &mut engine,
        b"return redis.call('set', KEYS[1], ARGV[1])",
        n,
    );
    let ten = per_run(
        &mut engine,
        b"for i = 1, 10 do redis.call('set', KEYS[1], ARGV[1]) end return 1",
        n / 4,
    );
    println!("EVALSHA 'return 1'           {empty:8.0} ns/run");
    println!(
        "EVALSHA 1 redis.call         {one:8.0} ns/run  ({:.0} ns per call)",
        one - empty
    );
    println!(
        "EVALSHA 10 redis.call        {ten:8.0} ns/run  ({:.0} ns per call)",
        (ten - empty) / 10.0
    );
    let m = 20_000u32;
    let t = Instant::now();
    for i in 0..m {
        engine
            .load(format!("return redis.call('get', KEYS[1]) .. '{i}'").as_bytes())
            .unwrap();
    }
    let compile = t.elapsed().as_nanos() as f64 / f64::from(m);
    println!("SCRIPT LOAD (compile+cache)  {compile:8.0} ns/script");
    println!(
        "cache: {} scripts, {} B of cache map ({} B each), Lua VM {} B ({} B per script)",
        engine.len(),
        engine.scripts_memory(),
        engine.scripts_memory() / engine.len(),
        engine.vm_memory(),
        engine.vm_memory() / engine.len()
    );
}
