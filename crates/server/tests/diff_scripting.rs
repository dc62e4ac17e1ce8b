//! EVAL / SCRIPT / FUNCTION / FCALL against redis-server 7.0, in RESP2 and
//! RESP3: conversions both ways, errors and their texts, flags and
//! shebangs, sandbox refusals, the Lua libraries, script calls of write,
//! read-only, noscript and blocking commands, SELECT inside scripts,
//! keyspace notifications and MONITOR lines from scripts, and FUNCTION
//! DUMP payloads restored across servers.

mod common;
use common::*;

#[test]
fn eval_conversions() {
    diff_text(
        "eval_conversions",
        r##"
EVAL "return 1" 0
EVAL "return -7.9" 0
EVAL "return 'hello'" 0
EVAL "return {1,2,3,'x',{4,'y'}}" 0
EVAL "return {1,nil,3}" 0
EVAL "return nil" 0
EVAL "return true" 0
EVAL "return false" 0
EVAL "return {true,false}" 0
EVAL "return {ok='fine'}" 0
EVAL "return {err='My error'}" 0
EVAL "return redis.error_reply('BAD thing')" 0
EVAL "return redis.error_reply('-NOPE')" 0
EVAL "return redis.status_reply('DONE')" 0
EVAL "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}" 2 a b c d
EVAL "return redis.call('set', KEYS[1], ARGV[1])" 1 k v
EVAL "return redis.call('get', KEYS[1])" 1 k
EVAL "return redis.call('get', 'nokey')" 0
EVAL "return redis.call('incr', 'n')" 0
EVAL "redis.call('rpush','l','a','b','c') return redis.call('lrange','l',0,-1)" 0
EVAL "redis.call('hset','h','f','v','g','w') return redis.call('hgetall','h')" 0     # unordered
EVAL "redis.call('zadd','z',1.5,'a',2,'b') return redis.call('zrange','z',0,-1,'withscores')" 0
EVAL "return redis.call('zscore','z','a')" 0
EVAL "return redis.call('type','h')" 0
EVAL "return redis.call('ping')" 0
EVAL "redis.setresp(3) return redis.call('zscore','z','a')" 0
EVAL "redis.setresp(3) return redis.call('hgetall','h')" 0     # unordered
EVAL "redis.setresp(3) redis.call('sadd','s','x') return redis.call('smembers','s')" 0
EVAL "redis.setresp(3) return redis.call('get','nokey')" 0
EVAL "redis.setresp(3) return {double=3.5}" 0
EVAL "redis.setresp(3) return {map={a=1}}" 0
EVAL "redis.setresp(3) return {set={a=true}}" 0
EVAL "redis.setresp(3) return {big_number='123456789012345678901234567890'}" 0
EVAL "redis.setresp(3) local r = redis.call('zscore','z','a') return {type(r), r['double']}" 0
EVAL "redis.setresp(3) local r = redis.call('hgetall','h') return {type(r), type(r['map'])}" 0
EVAL "local r = redis.call('hgetall','h') return type(r)" 0
EVAL "return redis.setresp(4)" 0
EVAL "return 3.99" 0
EVAL "return {1.5, 2.5}" 0
EVAL "return tostring(0.1)" 0
EVAL "return redis.sha1hex('abc')" 0
EVAL "return redis.REDIS_VERSION_NUM" 0
EVAL "return redis.pcall('incr', 'l')" 0
EVAL "return redis.pcall('nosuch')" 0
EVAL "local t = redis.pcall('incr', 'l') return t['err']" 0
"##,
    );
}

#[test]
fn eval_errors_and_numkeys() {
    diff_text(
        "eval_errors",
        r##"
EVAL "return 1" -1
EVAL "return 1" 2 a
EVAL "return 1" x
EVAL "return 1"
EVALSHA abc 0
EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
EVAL "return 'x' .. (" 0
EVAL "error('boom')" 0
EVAL "error({err='MYCODE custom'})" 0
EVAL "local x = nil; return x.y" 0
EVAL "return redis.call('nosuch')" 0
EVAL "return redis.call('config','bla')" 0
EVAL "return redis.call('config')" 0
EVAL "return redis.call('get')" 0
EVAL "return redis.call('multi')" 0
EVAL "return redis.call('eval','return 1','0')" 0
EVAL "return redis.call('blpop','nolist', 0)" 0
EVAL "return redis.call()" 0
EVAL "return redis.call({})" 0
EVAL "redis.call('set','str','x') return redis.call('lpush','str','y')" 0
EVAL "return redis.pcall('lpush','str','y')" 0
EVAL "x = 1" 0
EVAL "return os.exit()" 0
EVAL "return loadfile('/etc/passwd')" 0
EVAL "return dofile('/etc/passwd')" 0
EVAL "return io" 0
EVAL "redis = nil" 0
EVAL "string.foo = 1" 0
EVAL "return math.random()" 0
EVAL "math.randomseed(7) return math.random(100)" 0
SCRIPT LOAD "return 'cached'"
EVALSHA 952f49ffc8f7b098d8ab5da45d3164ca36ed18b1 0
EVALSHA 952F49FFC8F7B098D8AB5DA45D3164CA36ED18B1 0
SCRIPT EXISTS 952f49ffc8f7b098d8ab5da45d3164ca36ed18b1 ffffffffffffffffffffffffffffffffffffffff
SCRIPT LOAD "return ("
SCRIPT FLUSH bla
SCRIPT FLUSH SYNC ASYNC
SCRIPT FLUSH ASYNC
SCRIPT EXISTS 952f49ffc8f7b098d8ab5da45d3164ca36ed18b1
SCRIPT FLUSH
SCRIPT KILL
FUNCTION KILL
SCRIPT DEBUG bla
SCRIPT DEBUG no
SCRIPT HELP
SCRIPT
SCRIPT bla
"##,
    );
}

#[test]
fn shebang_flags_and_read_only() {
    diff_text(
        "shebang_flags",
        r##"
EVAL "#!lua\nreturn redis.call('set','a','b')" 0
EVAL "#!lua flags=no-writes\nreturn redis.call('set','a','b')" 0
EVAL "#!lua flags=no-writes\nreturn redis.call('get','a')" 0
EVAL "#!lua flags=no-writes,allow-oom\nreturn 1" 0
EVAL "#!lua flags=bogus\nreturn 1" 0
EVAL "#!lua name=x\nreturn 1" 0
EVAL "#!js\nreturn 1" 0
EVAL "#!lua" 0
EVAL_RO "return redis.call('get','a')" 0
EVAL_RO "return redis.call('set','a','b')" 0
EVAL_RO "return redis.call('publish','ch','m')" 0
EVAL_RO "#!lua\nreturn 1" 0
EVAL_RO "#!lua flags=no-writes\nreturn redis.call('get','a')" 0
SCRIPT LOAD "return redis.call('get','a')"
EVALSHA_RO eaeaa27fd219f13108fd9dea9f5ef7513173e803 0
EVALSHA_RO nosuchsha 0
EVAL "#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\nreturn redis.call('get','a')" 0
"##,
    );
}

#[test]
fn lua_libraries_round_trip() {
    diff_text(
        "lua_libs",
        r##"
EVAL "return cjson.encode({a=1})" 0
EVAL "return cjson.encode({1,2,'x',{true,false}})" 0
EVAL "local t = cjson.decode('{\"a\":[1,2,{\"b\":null}],\"c\":\"d\"}') return {t.a[1], t.a[2], t.c}" 0
EVAL "return cjson.decode('[1,2')" 0
EVAL "return cjson.encode(cjson.decode('[1.5,\"x\",[]]'))" 0
EVAL "return cmsgpack.pack({1,2,3})" 0
EVAL "return cmsgpack.unpack(cmsgpack.pack({1,'two',{3}}))" 0
EVAL "return {cmsgpack.unpack(cmsgpack.pack(1,'a',-5))}" 0
EVAL "return struct.pack('>iH', 1, 2)" 0
EVAL "return {struct.unpack('>iH', struct.pack('>iH', -3, 7))}" 0
EVAL "return bit.band(0xff, 0x0f)" 0
EVAL "return {bit.bor(1,2), bit.bxor(3,1), bit.lshift(1,4), bit.rshift(256,4), bit.tohex(255)}" 0
EVAL "return redis.sha1hex('')" 0
"##,
    );
}

#[test]
fn script_calls_select_and_blocking() {
    diff_text(
        "script_calls",
        r##"
SELECT 2
EVAL "redis.call('set','k','db2') redis.call('select','5') redis.call('set','k','db5') return redis.call('get','k')" 0
GET k
SELECT 5
GET k
SELECT 0
EVAL "return redis.call('lmove','nolist','dst','left','right')" 0
EVAL "return redis.call('blmove','nolist','dst','left','right', 0)" 0
EVAL "return redis.call('bzpopmin','nozset', 0)" 0
EVAL "return redis.call('client','id') > 0" 0
EVAL "return redis.call('watch','x')" 0
EVAL "return redis.call('subscribe','x')" 0
EVAL "return redis.call('dbsize')" 0
EVAL "redis.call('set','short','1','px','5') local t = redis.call('time') local deadline = tonumber(t[1]) * 1000000 + tonumber(t[2]) + 30000 repeat t = redis.call('time') until tonumber(t[1]) * 1000000 + tonumber(t[2]) > deadline return redis.call('get','short')" 0
MULTI
EVAL "return redis.call('incr','m')" 0
EVAL "return redis.call('incr','m')" 0
EXEC
"##,
    );
}

#[test]
fn functions_load_list_call() {
    diff_text(
        "functions",
        r##"
FUNCTION FLUSH
FUNCTION LOAD "#!lua name=mylib\nredis.register_function{function_name='f1', callback=function(k,a) return redis.call('set', k[1], a[1]) end, description='setter'}\nredis.register_function{function_name='f2', callback=function(k,a) return redis.call('get', k[1]) end, flags={'no-writes'}}"
FUNCTION LOAD "#!lua name=mylib\nredis.register_function('f3', function() return 3 end)"
FUNCTION LOAD REPLACE "#!lua name=mylib\nredis.register_function{function_name='f1', callback=function(k,a) return redis.call('set', k[1], a[1]) end, description='setter'}\nredis.register_function{function_name='f2', callback=function(k,a) return redis.call('get', k[1]) end, flags={'no-writes'}}"
FUNCTION LOAD "#!lua name=other\nredis.register_function('f1', function() return 1 end)"
FUNCTION LOAD "#!lua name=lib2\nredis.register_function('g', function(k, a) return {k, a} end)"
FUNCTION LOAD bla "x"
FUNCTION LOAD REPLACE
FUNCTION LOAD "return 1"
FCALL f1 1 fk fv
FCALL f2 1 fk
FCALL_RO f2 1 fk
FCALL_RO f1 1 fk v2
FCALL g 2 a b c d
FCALL g 0
FCALL nosuch 0
FCALL f1 -1
FCALL f1 3 a
FUNCTION LIST                                    # unordered
FUNCTION LIST WITHCODE LIBRARYNAME my*            # unordered
FUNCTION LIST LIBRARYNAME nomatch*
FUNCTION LIST LIBRARYNAME
FUNCTION LIST bla
FUNCTION LIST WITHCODE WITHCODE
FUNCTION STATS                                   # unordered
FUNCTION DELETE nope
FUNCTION DELETE lib2
FCALL g 0
FUNCTION RESTORE bad
FUNCTION RESTORE bad bla
FUNCTION FLUSH bla
FUNCTION FLUSH a b
FUNCTION HELP
FUNCTION
FUNCTION FLUSH ASYNC
FUNCTION LIST
FUNCTION STATS
"##,
    );
}

#[test]
fn function_dump_restore_on_the_same_server() {
    // The payload bytes differ (redis-server compresses the code with
    // LZF), so compare what restoring them does.
    diff_text(
        "function_dump_restore",
        r##"
FUNCTION LOAD "#!lua name=dl\nredis.register_function('d1', function() return 'd1' end)"
FUNCTION LOAD "#!lua name=dl2\nredis.register_function('d2', function() return 'd2' end)"
"##,
    );
    let petrel = TestServer::start(&[]);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let lib = "#!lua name=dl\nredis.register_function('d1', function() return 'd1 returns a long enough string to be compressed by redis' end)";
    for s in [&petrel, &redis] {
        let mut c = s.raw();
        assert_eq!(
            c.cmd(&["FUNCTION", "LOAD", lib]),
            Value::bulk("dl"),
            "{}",
            s.port()
        );
    }
    let mut p = petrel.raw();
    let mut r = redis.raw();
    let Value::Bulk(pdump) = p.cmd(&["FUNCTION", "DUMP"]) else {
        panic!("petrel dump")
    };
    let Value::Bulk(rdump) = r.cmd(&["FUNCTION", "DUMP"]) else {
        panic!("redis dump")
    };
    // Each restores the other's payload, with every policy.
    for (c, payload) in [(&mut p, &rdump), (&mut r, &pdump)] {
        let pl = payload.as_slice();
        let exists = c.cmd(&[b"FUNCTION".as_slice(), b"RESTORE", pl]);
        assert_eq!(exists, err("ERR Library dl already exists"));
        assert_eq!(
            c.cmd(&[b"FUNCTION".as_slice(), b"RESTORE", pl, b"REPLACE"]),
            Value::simple("OK")
        );
        assert_eq!(c.cmd(&["FUNCTION", "FLUSH"]), Value::simple("OK"));
        assert_eq!(
            c.cmd(&[b"FUNCTION".as_slice(), b"RESTORE", pl]),
            Value::simple("OK")
        );
        assert_eq!(
            c.cmd(&[b"FUNCTION".as_slice(), b"RESTORE", pl, b"FLUSH"]),
            Value::simple("OK")
        );
        assert_eq!(
            c.cmd(&["FCALL", "d1", "0"]),
            Value::bulk("d1 returns a long enough string to be compressed by redis")
        );
        let mut bad = pl.to_vec();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert_eq!(
            c.cmd(&[b"FUNCTION".as_slice(), b"RESTORE", &bad]),
            err("ERR DUMP payload version or checksum are wrong")
        );
    }
    // Same-server round trip: identical libraries listed.
    let list = |c: &mut RawConn| c.cmd(&["FUNCTION", "LIST", "WITHCODE"]);
    assert_eq!(
        common::diff::normalize(&list(&mut p)),
        common::diff::normalize(&list(&mut r))
    );
}

#[test]
fn keyspace_events_from_scripts() {
    diff_events(&[
        &[
            "EVAL",
            "redis.call('set',KEYS[1],'1') redis.call('incr',KEYS[1]) redis.call('del',KEYS[1]) redis.call('lpush','l','a')",
            "1",
            "k",
        ],
        &[
            "EVAL",
            "redis.call('select','4') redis.call('set','x','y') redis.call('expire','x',100)",
            "0",
        ],
        &["SET", "after", "1"],
    ]);
}

/// MONITOR lines of the script and of the commands it calls, with the
/// timestamp and the caller's address cut off.
fn monitor_lines(s: &Server) -> Vec<String> {
    let mut mon = s.raw();
    assert_eq!(mon.cmd(&["MONITOR"]), Value::simple("OK"));
    let mut c = s.raw();
    c.cmd(&[
        "EVAL",
        "redis.call('set',KEYS[1],'1') redis.call('select','3') return redis.call('get',KEYS[1])",
        "1",
        "k",
    ]);
    c.cmd(&["EVAL_RO", "return redis.call('set','a','b')", "0"]);
    c.cmd(&["SCRIPT", "LOAD", "return redis.call('ping')"]);
    c.cmd(&["EVALSHA", "b3a02c833904802db9c34a3cf1292eee3246df3c", "0"]);
    c.cmd(&["PING"]);
    let mut lines = Vec::new();
    loop {
        let line = mon.read_line().expect("monitor line");
        let (_, rest) = line.split_once(' ').unwrap();
        let (who, cmd) = rest.split_once("] ").unwrap();
        let who = if who.ends_with("lua") {
            who.to_string()
        } else {
            who.split(' ').next().unwrap().to_string()
        };
        lines.push(format!("{who}] {cmd}"));
        if cmd == "\"PING\"" {
            return lines;
        }
    }
}

#[test]
fn monitor_lines_from_scripts() {
    let petrel = TestServer::start(&[]);
    let got = monitor_lines(&petrel);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let want = monitor_lines(&redis);
    assert_eq!(got, want);
}

#[test]
fn oom_with_maxmemory() {
    let opts = DiffOpts::new(&[]);
    let script = Script::new("oom").text(
        r##"
SET big "x"
CONFIG SET maxmemory 1                  # any
EVAL "return redis.call('set','a','b')" 0
EVAL "return redis.call('get','big')" 0
EVAL "#!lua\nreturn redis.call('set','a','b')" 0
EVAL "#!lua flags=allow-oom\nreturn redis.call('set','a','b')" 0
EVAL "#!lua flags=no-writes\nreturn redis.call('get','big')" 0
EVAL "redis.call('del','nokey') return redis.call('set','a','b')" 0
FUNCTION LOAD "#!lua name=x\nredis.register_function('x', function() return 1 end)"
CONFIG SET maxmemory 0                  # any
"##,
    );
    diff_with(&script, &opts);
}

/// SCRIPT DEBUG is refused while the client has replies not yet written:
/// inside EXEC (found by the differential fuzzer) and after other commands
/// of the same pipeline.
#[test]
fn script_debug_inside_exec_and_pipelines() {
    diff_text(
        "script_debug_inside_exec_and_pipelines",
        r#"
SCRIPT DEBUG NO
MULTI
SCRIPT DEBUG NO
SCRIPT DEBUG YES
SCRIPT DEBUG bogus
EXEC
"#,
    );
    for kind in [Kind::Petrel, Kind::Redis] {
        if kind == Kind::Redis && !redis_available() {
            continue;
        }
        let s = Server::start_opts(kind, Opts::default());
        let mut c = RawConn::tcp(s.port());
        c.try_send(b"PING\r\nSCRIPT DEBUG NO\r\n").unwrap();
        assert_eq!(c.read_line().as_deref(), Some("+PONG"), "{kind:?}");
        assert_eq!(
            c.read_line().as_deref(),
            Some("-ERR SCRIPT DEBUG must be called outside a pipeline"),
            "{kind:?}"
        );
    }
}

/// Redis's Lua parses every chunk as text: bytecode from `string.dump`
/// never loads (crafted bytecode escapes any Lua sandbox), through
/// EVAL, SCRIPT LOAD, FUNCTION LOAD, `loadstring` or `load`, and a chunk
/// that starts with ESC fails as a syntax error at line 1. Argument errors
/// of `loadstring`/`load` read as Lua's own.
#[test]
fn lua_never_loads_precompiled_chunks() {
    diff_text(
        "lua_never_loads_precompiled_chunks",
        r##"
EVAL "local f, e = loadstring(string.dump(function() return 7 end)) return {type(f), e}" 0
EVAL "local f, e = loadstring(string.char(27) .. 'Lua') return e" 0
EVAL "local f, e = loadstring(string.char(27) .. 'Lua', 'nm') return e" 0
EVAL "local f, e = loadstring(string.char(27) .. 'Lua', '=nm') return e" 0
EVAL "local s = string.dump(function() return 7 end) local i = 0 local f, e = load(function() i = i + 1 if i == 1 then return s end end) return {type(f), e}" 0
EVAL "local i = 0 local f, e = load(function() i = i + 1 if i == 1 then return '' elseif i == 2 then return string.char(27) end end) return {type(f), e}" 0
EVAL "local i = 0 local f = load(function() i = i + 1 if i == 1 then return 'return 9' end end) return f()" 0
EVAL "local i = 0 local f, e = load(function() i = i + 1 if i == 1 then return 'return 9 +' end end, 'nm') return e" 0
EVAL "return loadstring('return 5')()" 0
EVAL "local f = loadstring(12) return f()" 0
EVAL "local f = loadstring('return 1', 5) return f()" 0
EVAL "return select('#', loadstring('return'))" 0
EVAL "return select('#', loadstring('x x'))" 0
EVAL "local f, e = loadstring({}) return e" 0
EVAL "local f, e = loadstring() return e" 0
EVAL "local f, e = loadstring('x', {}) return e" 0
EVAL "local f, e = load(5) return e" 0
EVAL "local f, e = load() return e" 0
EVAL "local f, e = load(function() end, {}) return e" 0
EVAL "local f = load(function() return nil end) return type(f)" 0
EVAL "\x1bLua" 0
EVAL "#!lua\n\x1bLua" 0
SCRIPT LOAD "\x1b"
FUNCTION LOAD "#!lua name=x\n\x1bLua"
FUNCTION LOAD "#!lua name=x\nredis.register_function('f', function() local f, e = loadstring(string.dump(function() return 1 end)) return {type(f), e} end)"
FCALL f 0
FUNCTION FLUSH
"##,
    );
}

/// Numbers inside tables reach the libraries exactly: -0 and values below
/// 2^-52, which mlua's Lua 5.1 conversion hands over as the integer 0, are
/// read again (cjson and cmsgpack; see crates/scripting/src/libs/exact.rs).
#[test]
fn lua_libraries_see_tiny_numbers_and_negative_zero_in_tables() {
    diff_text(
        "lua_libraries_see_tiny_numbers_and_negative_zero_in_tables",
        r##"
EVAL "return cjson.encode({1e-20, -0.0, 0, 2.5e-17, 1, 5e-324})" 0
EVAL "return cjson.encode({a = -0.0, b = 1e-300, c = 0})" 0
EVAL "return cjson.encode({x = {1e-20}})" 0
EVAL "return {cmsgpack.pack({1e-20, -0.0, 0}), cmsgpack.pack({x = 1e-20, y = -0.0})}" 0
EVAL "return tostring(cmsgpack.unpack(cmsgpack.pack({1e-20}))[1])" 0
EVAL "return {cjson.encode(1e-3), cjson.encode({0.5, 2^53})}" 0
"##,
    );
}

/// A library function's own arguments reach it exactly (-0 and values
/// below 2^-52 too, through the exact-number trampoline), and bad
/// arguments get Lua's own errors: the type actually passed ("got string",
/// "got nil" for struct.pack's first missing value, "got no value"), the
/// name the caller used ("?" from pcall, a local's name), method calls not
/// counting self, and lua-cjson's settings checks (too many arguments,
/// integer ranges, option names, earlier settings kept on a later error).
#[test]
fn lua_library_arguments_exact_and_checked() {
    diff_text(
        "lua_library_arguments_exact_and_checked",
        r##"
EVAL "return {cjson.encode(-0.0), cjson.encode(1e-20), cjson.encode(5e-324), cjson.encode(-0.0) .. cjson.encode(1e-20)}" 0
EVAL "return {cmsgpack.pack(1e-20), cmsgpack.pack(1, -0.0, 1e-20), cmsgpack.unpack(1e-20)}" 0
EVAL "return {struct.pack('d', 1e-20), struct.pack('d', -0.0), struct.pack('f', 1e-20), struct.pack('s', 1e-20), struct.pack('s', -0.0)}" 0
EVAL "return struct.unpack(1e-20, 'x')" 0
EVAL "return struct.size(-0.0)" 0
EVAL "return {redis.sha1hex(1e-20), redis.sha1hex(-0.0), redis.sha1hex(-1e-30)}" 0
EVAL "return select(2, pcall(cjson.encode, -0.0))" 0
EVAL "return {struct.unpack('d', struct.pack('d', -0.0))}" 0
EVAL "return struct.pack('d', 'x')" 0
EVAL "return struct.pack('d')" 0
EVAL "return struct.pack('dd', 1, 'x')" 0
EVAL "return struct.pack()" 0
EVAL "return struct.pack(nil)" 0
EVAL "return struct.pack('s', {})" 0
EVAL "return struct.pack('c', true)" 0
EVAL "return struct.unpack()" 0
EVAL "return struct.unpack('b', {})" 0
EVAL "return struct.unpack('b', 'x', {})" 0
EVAL "return struct.size({})" 0
EVAL "return cmsgpack.unpack()" 0
EVAL "return cjson.decode({})" 0
EVAL "return math.random(1, {})" 0
EVAL "return math.randomseed()" 0
EVAL "return select(2, pcall(struct.pack, 'd'))" 0
EVAL "return select(2, pcall(bit.band, 1, {}))" 0
EVAL "return select(2, pcall(function() return struct.pack('d') end))" 0
EVAL "return select(2, pcall(function() return bit:band() end))" 0
EVAL "return select(2, pcall(function() return bit:tohex({}) end))" 0
EVAL "return select(2, pcall(function() local f = bit.band; return f(1, {}) end))" 0
EVAL "return select(2, pcall(function() local t = {f = struct.pack}; return t.f('d') end))" 0
EVAL "return select(2, pcall(cmsgpack.pack))" 0
EVAL "local j = cjson.new(); return {j.encode_max_depth('5'), j.encode_number_precision('3'), j.encode(1/3)}" 0
EVAL "local j = cjson.new(); return j.encode_max_depth('x')" 0
EVAL "local j = cjson.new(); return j.encode_max_depth(0)" 0
EVAL "local j = cjson.new(); return j.encode_max_depth(4294967297)" 0
EVAL "local j = cjson.new(); return j.encode_max_depth(1, 2)" 0
EVAL "local j = cjson.new(); return j:encode_max_depth(3)" 0
EVAL "local j = cjson.new(); return j.encode_keep_buffer({})" 0
EVAL "local j = cjson.new(); return j.encode_keep_buffer('x')" 0
EVAL "local j = cjson.new(); return {j.encode_keep_buffer('off'), j.encode_keep_buffer(true)}" 0
EVAL "local j = cjson.new(); return j.decode_invalid_numbers('null')" 0
EVAL "local j = cjson.new(); return {j.encode_invalid_numbers('null'), j.encode(0/0)}" 0
EVAL "local j = cjson.new(); return j.encode_invalid_numbers(2)" 0
EVAL "local j = cjson.new(); return j.encode_sparse_array(true, -1)" 0
EVAL "local j = cjson.new(); return j.encode_sparse_array(true, 3, 'x')" 0
EVAL "local j = cjson.new(); return j.encode_sparse_array(1, 2, 3, 4)" 0
EVAL "local j = cjson.new(); pcall(j.encode_sparse_array, true, 5, -1); return {j.encode_sparse_array()}" 0
EVAL "local j = cjson.new(); return {j.encode_sparse_array(false, 1.5, 2.5)}" 0
"##,
    );
}

/// The base functions the sandbox replaces (rawget, rawset, next, pairs,
/// getmetatable, setmetatable, pcall, xpcall, coroutine.resume,
/// loadstring, load) behave as Redis's, errors included: in tail position
/// (the script's frame and its `user_script:1:` prefix stay), under pcall
/// (`'?'`), through a local (its name), `error(msg, 2)` given to pcall
/// (points at the script, not at sandbox code), Redis 7.0's own pcall
/// (an error table's `err`, a non-string `err` left after the table, no
/// argument at all), and pairs' iterator not being the global next.
#[test]
fn lua_base_functions_as_redis() {
    diff_text(
        "lua_base_functions_as_redis",
        r##"
EVAL "return {pcall(rawget)}" 0
EVAL "return {pcall(rawget, {})}" 0
EVAL "return select(2, pcall(rawget, 1, 2))" 0
EVAL "return select(2, pcall(function() return rawget(1, 2) end))" 0
EVAL "return select(2, pcall(function() local g = rawget; return g(1, 2) end))" 0
EVAL "return select(2, pcall(next))" 0
EVAL "return select(2, pcall(pairs))" 0
EVAL "return select(2, pcall(loadstring))" 0
EVAL "return select(2, pcall(loadstring, {}))" 0
EVAL "return select(2, pcall(function() return loadstring({}) end))" 0
EVAL "return select(2, pcall(function() return pairs(nil) end))" 0
EVAL "return select(2, pcall(function() return coroutine.resume(1) end))" 0
EVAL "return {pcall(error, 'x', 2)}" 0
EVAL "return {pcall(error, 'x', 1)}" 0
EVAL "return {pcall()}" 0
EVAL "return {pcall(pcall)}" 0
EVAL "return select('#', pcall(error, {}))" 0
EVAL "return {pcall(error, {err = true})}" 0
EVAL "return {pcall(error, {err = 5})}" 0
EVAL "return {pcall(error, setmetatable({}, {__index = function() return 'via index' end}))}" 0
EVAL "return {pcall(redis.call, 'nosuchcommand')}" 0
EVAL "return {xpcall(function() return redis.call('nosuchcommand') end, function(e) return type(e) .. ':' .. tostring(e.err) end)}" 0
EVAL "return {xpcall(function() error('x') end, 1)}" 0
EVAL "return {coroutine.resume(coroutine.create(function() return redis.call('nosuchcommand') end))}" 0
EVAL "return (pairs({})) == next" 0
EVAL "return rawequal(next, (pairs(redis)))" 0
EVAL "return {next(redis) ~= nil, next(_G) ~= nil, rawget(redis, 'call') ~= nil}" 0
EVAL "return {pcall(rawset, _G, 'x', 1)}" 0
EVAL "return {pcall(setmetatable, {})}" 0
EVAL "return {pcall(setmetatable, {}, 1)}" 0
EVAL "return {pcall(setmetatable, setmetatable({}, {__metatable = 'locked'}), {})}" 0
EVAL "return {pcall(setmetatable, redis, {})}" 0
EVAL "return {getmetatable(1), type(getmetatable('x')), type(getmetatable(_G)), type(getmetatable(redis))}" 0
EVAL "return {pcall(function() getmetatable('').x = 1 end)}" 0
EVAL "return {pcall(loadstring('error(\"in chunk\")', 'mychunk'))}" 0
EVAL "return {pcall(loadstring('error(\"in chunk\")'))}" 0
EVAL "return {pcall(load, print, {})}" 0
EVAL "local f, e = load(function() return {} end); return {f, e}" 0
EVAL "local f, e = load(function() error('in reader') end); return {f, e}" 0
EVAL "local i = 0; local f = load(function() i = i + 1; if i == 1 then return 'return ' elseif i == 2 then return '42' end end); return f()" 0
"##,
    );
}

/// A script that does not compile answers Lua's message byte for byte,
/// bytes that are not UTF-8 included (they used to come back as U+FFFD,
/// through mlua's String).
#[test]
fn compile_errors_keep_the_scripts_bytes() {
    diff_text(
        "compile_errors_keep_the_scripts_bytes",
        r##"
EVAL "return \xff\xfe" 0
SCRIPT LOAD "x = \xc3"
EVAL "return 'a\xe9" 0
EVAL "\xe9\xe9 = 1" 0
SCRIPT LOAD "local \xff"
EVAL "#!lua\nreturn \xff" 0
EVAL "\x1bLua\xff" 0
"##,
    );
}
