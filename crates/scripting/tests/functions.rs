//! FUNCTION LOAD / FCALL against redis-server 7.0, and the busy hook.

mod common;

use common::{start_server, Client, ForwardHost};
use resp::{Protocol, ReplyBuf};
use scripting::{EngineConfig, FunctionEngine, ScriptEngine, VersionInfo};

const LIBS: &[&str] = &[
    "return 1",
    "#!lua name=lib5\nlocal x = 1",
    "#!lua name=lib4\nredis.register_function('f4')",
    "#!lua name=lib4\nredis.register_function{function_name='f4', callback=function() return 4 end, flags={'no-writes','bogus'}}",
    "#!lua name=lib5\nredis.call('ping')",
    "#!lua name=lib5\nx = 1",
    "#!lua name=lib5\nreturn math.random()",
    "#!lua name=lib5\nredis.register_function('bad name!', function() end)",
    "#!lua name=bad-name!",
    "#!lua name=lib5 flags=no-writes\nredis.register_function('f5', function() end)",
    "#!lua\nredis.register_function('f5', function() end)",
    "#!lua name=lib5\nredis.register_function('f5', function() end, 1)",
    "#!lua name=lib5\nredis.register_function{function_name='f5'}",
    "#!lua name=lib5\nredis.register_function{function_name='f5', callback=1}",
    "#!lua name=lib5\nredis.register_function{function_name='f5', callback=function() end, xx=1}",
    "#!lua name=lib5\nredis.register_function('f5', function() end) redis.register_function('f5', function() end)",
    "#!lua name=lib5\nerror('boom')",
    "#!lua name=lib5\nreturn 'x' .. (",
    "#!js name=x\nr",
    "#!lua name=a name=b\nr",
    "#!lua name=libz\nlocal up = 5\nredis.register_function('z1', function(keys, args) local t = {} for k in pairs(_G) do t[#t+1]=k end table.sort(t) return t end)\nredis.register_function('z2', function(keys, args) local t = {} for k in pairs(redis) do t[#t+1]=k end table.sort(t) return t end)\nredis.register_function('z3', function(keys, args) return {keys, args, up, math.floor(2.5)} end)\nredis.register_function('z4', function(keys, args) return nope end)\nredis.register_function('z5', function(keys, args) return redis.call('nosuchcmd') end)\nredis.register_function('z7', function(keys, args) return KEYS end)\nredis.register_function{function_name='z8', callback=function(keys, args) error('x') end, flags={'no-writes'}, description='d'}",
    "#!lua name=libz\nredis.register_function('other', function() return 1 end)",
    "#!lua name=liby\nredis.register_function('z1', function() return 1 end)",
];

#[test]
fn function_load_and_fcall_match_redis() {
    let Some(server) = start_server() else { return };
    let mut client = Client::connect(server.port, Protocol::Resp2);
    let mut host = ForwardHost::new(server.port);
    let mut engine = FunctionEngine::new(VersionInfo::default());
    let mut diffs = Vec::new();
    for code in LIBS {
        let expected = client.raw(&["FUNCTION", "LOAD", code]);
        let mut out = ReplyBuf::new(Protocol::Resp2);
        match engine.load(Some(&mut host), code.as_bytes(), false) {
            Ok(name) => out.bulk(name.as_bytes()),
            Err(e) => out.error(&e),
        }
        if out.as_bytes() != expected.as_slice() {
            diffs.push(format!(
                "load {code:?}\n  redis:  {:?}\n  petrel: {:?}",
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(out.as_bytes())
            ));
        }
    }
    for (f, keys, args) in [
        ("z1", &[][..], &[][..]),
        ("z2", &[], &[]),
        ("z3", &["a", "b"], &["c", "d"]),
        ("z4", &[], &[]),
        ("z5", &[], &[]),
        ("z7", &[], &[]),
        ("z8", &[], &[]),
        ("nope", &[], &[]),
    ] {
        let mut argv = vec!["FCALL".to_string(), f.to_string(), keys.len().to_string()];
        argv.extend(keys.iter().map(|s: &&str| s.to_string()));
        argv.extend(args.iter().map(|s: &&str| s.to_string()));
        let expected = client.raw(&argv);
        let k: Vec<&[u8]> = keys.iter().map(|s| s.as_bytes()).collect();
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        let mut out = ReplyBuf::new(Protocol::Resp2);
        engine.call(&mut host, f.as_bytes(), &k, &a, &mut out);
        if out.as_bytes() != expected.as_slice() {
            diffs.push(format!(
                "fcall {f}\n  redis:  {:?}\n  petrel: {:?}",
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(out.as_bytes())
            ));
        }
    }
    let (_, z8) = engine.function(b"z8").unwrap();
    assert_eq!(z8.flags.names(), vec!["no-writes"]);
    assert_eq!(z8.description.as_deref(), Some(&b"d"[..]));
    assert_eq!(engine.delete("nope"), Err("ERR Library not found".into()));
    let codes: Vec<Vec<u8>> = engine
        .dump_codes()
        .into_iter()
        .map(|c| c.to_vec())
        .collect();
    engine.delete("libz").unwrap();
    assert_eq!(engine.function_count(), 0);
    let refs: Vec<&[u8]> = codes.iter().map(|c| c.as_slice()).collect();
    engine
        .restore(&refs, scripting::RestorePolicy::Append)
        .unwrap();
    assert_eq!(engine.function_count(), 7);
    assert!(engine
        .restore(&refs, scripting::RestorePolicy::Append)
        .is_err());
    assert_eq!(
        engine.function_count(),
        7,
        "a failed restore changes nothing"
    );
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn busy_hook_kills_a_spinning_script() {
    let Some(server) = start_server() else { return };
    let mut host = ForwardHost::new(server.port);
    host.kill_after = Some(3);
    let mut engine = ScriptEngine::new(EngineConfig::default());
    let mut out = ReplyBuf::new(Protocol::Resp2);
    engine.eval(
        &mut host,
        b"local i = 0 while true do i = i + 1 end",
        &[],
        &[],
        &mut out,
    );
    assert_eq!(
        String::from_utf8_lossy(out.as_bytes()),
        "-ERR Script killed by user with SCRIPT KILL... script: 3fcf51a9b854b8f66cb8685600b0d7df968f4398, on @user_script:1.\r\n"
    );
    assert!(engine.was_killed());
    assert_eq!(host.busy_calls, 3);
    // The engine keeps working afterwards.
    let mut out = ReplyBuf::new(Protocol::Resp2);
    engine.eval(&mut host, b"return 1", &[], &[], &mut out);
    assert_eq!(out.as_bytes(), b":1\r\n");
    assert_eq!(engine.len(), 2);
    assert!(engine.vm_memory() > 0);
    engine.flush();
    assert_eq!(engine.len(), 0);
}
