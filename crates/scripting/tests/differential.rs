//! Differential tests: every script runs as EVAL on redis-server 7.0 and
//! in this crate's engine (whose `redis.call` goes to the same server), in
//! RESP2 and RESP3, and the replies must be identical byte for byte.

mod common;

use common::{start_server, Client, ForwardHost};
use resp::{Protocol, ReplyBuf};
use scripting::{EngineConfig, ScriptEngine};

/// (setup commands, script, keys, args)
type Case = (
    &'static [&'static [&'static str]],
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const NO_SETUP: &[&[&str]] = &[];

fn run_cases(cases: &[Case]) {
    let Some(server) = start_server() else { return };
    let mut engine = ScriptEngine::new(EngineConfig::default());
    let mut host = ForwardHost::new(server.port);
    let mut failures = Vec::new();
    for proto in [Protocol::Resp2, Protocol::Resp3] {
        let mut client = Client::connect(server.port, proto);
        for (setup, script, keys, args) in cases {
            let prepare = |c: &mut Client| {
                c.raw(&["FLUSHALL"]);
                for cmd in setup.iter() {
                    c.raw(cmd);
                }
            };
            prepare(&mut client);
            let mut argv: Vec<Vec<u8>> = vec![
                b"EVAL".to_vec(),
                script.as_bytes().to_vec(),
                keys.len().to_string().into_bytes(),
            ];
            argv.extend(keys.iter().map(|k| k.as_bytes().to_vec()));
            argv.extend(args.iter().map(|a| a.as_bytes().to_vec()));
            let expected = client.raw(&argv);
            prepare(&mut client);
            let k: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            let a: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            let mut out = ReplyBuf::new(proto);
            engine.eval(&mut host, script.as_bytes(), &k, &a, &mut out);
            if out.as_bytes() != expected.as_slice() {
                failures.push(format!(
                    "{proto:?} script {script:?}\n  redis:  {:?}\n  petrel: {:?}",
                    String::from_utf8_lossy(&expected),
                    String::from_utf8_lossy(out.as_bytes())
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn conversions_reply_to_lua_and_back() {
    run_cases(&[
        (NO_SETUP, "return 1", &[], &[]),
        (NO_SETUP, "return 3.99", &[], &[]),
        (NO_SETUP, "return -3.99", &[], &[]),
        (NO_SETUP, "return 'hello'", &[], &[]),
        (NO_SETUP, "return true", &[], &[]),
        (NO_SETUP, "return false", &[], &[]),
        (NO_SETUP, "return nil", &[], &[]),
        (NO_SETUP, "return {1,2,nil,4}", &[], &[]),
        (NO_SETUP, "return {true,false,1,'x',{1,{2}}}", &[], &[]),
        (NO_SETUP, "return {ok='fine'}", &[], &[]),
        (NO_SETUP, "return {ok='a\\r\\nb'}", &[], &[]),
        (NO_SETUP, "return {err='x'}", &[], &[]),
        (NO_SETUP, "return {err='MY\\nx'}", &[], &[]),
        (NO_SETUP, "return redis.error_reply('MY x')", &[], &[]),
        (NO_SETUP, "return redis.error_reply('x')", &[], &[]),
        (NO_SETUP, "return redis.error_reply('-x')", &[], &[]),
        (NO_SETUP, "return redis.error_reply(1)", &[], &[]),
        (NO_SETUP, "return redis.status_reply('fine')", &[], &[]),
        (NO_SETUP, "return redis.status_reply()", &[], &[]),
        (NO_SETUP, "return {map={a=1}}", &[], &[]),
        (NO_SETUP, "return {double=3.5}", &[], &[]),
        (NO_SETUP, "return {double=1/0}", &[], &[]),
        (NO_SETUP, "return {double=0.1}", &[], &[]),
        (NO_SETUP, "return {big_number='123'}", &[], &[]),
        (NO_SETUP, "return {set={a=true}}", &[], &[]),
        (NO_SETUP, "return {verbatim_string={format='txt',string='hi'}}", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return true", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return false", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return {true, false}", &[], &[]),
        (NO_SETUP, "return {1e300, -1e300, 0/0}", &[], &[]),
        (NO_SETUP, "return KEYS", &["a", "b"], &["c"]),
        (NO_SETUP, "return ARGV", &["a"], &["x", "y", ""]),
        (&[&["SET", "k", "v"]], "return redis.call('get', KEYS[1])", &["k"], &[]),
        (NO_SETUP, "return redis.call('get', 'missing')", &[], &[]),
        (NO_SETUP, "return type(redis.call('get', 'missing'))", &[], &[]),
        (&[&["SET", "k", "v"]], "return redis.call('set', 'k', 'w')", &[], &[]),
        (&[&["SET", "k", "v"]], "local r = redis.call('set', 'k', 'w') return r.ok", &[], &[]),
        (&[&["RPUSH", "l", "a", "b", "c"]], "return redis.call('lrange', 'l', 0, -1)", &[], &[]),
        (&[&["HSET", "h", "f", "v", "g", "w"]], "return redis.call('hgetall', 'h')", &[], &[]),
        (&[&["HSET", "h", "f", "v"]], "redis.setresp(3) return redis.call('hgetall', 'h')", &[], &[]),
        (&[&["HSET", "h", "f", "v"]], "redis.setresp(3) local r = redis.call('hgetall', 'h') return r.map.f", &[], &[]),
        (&[&["SADD", "s", "m"]], "redis.setresp(3) return redis.call('smembers', 's')", &[], &[]),
        (&[&["SADD", "s", "m"]], "redis.setresp(3) local r = redis.call('smembers', 's') return tostring(r.set.m)", &[], &[]),
        (&[&["ZADD", "z", "1.5", "m"]], "redis.setresp(3) return redis.call('zscore', 'z', 'm')", &[], &[]),
        (&[&["ZADD", "z", "1.5", "m"]], "redis.setresp(3) local r = redis.call('zscore', 'z', 'm') return tostring(r.double)", &[], &[]),
        (&[&["ZADD", "z", "1.5", "m"]], "return redis.call('zscore', 'z', 'm')", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return redis.call('get', 'nope')", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return type(redis.call('get', 'nope'))", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return redis.call('exists', 'nope')", &[], &[]),
        (NO_SETUP, "redis.setresp(3) local r = redis.call('lolwut', 'version', '5') return type(r)", &[], &[]),
        (NO_SETUP, "return redis.call('info', 'keyspace')", &[], &[]),
        (NO_SETUP, "redis.setresp(3) return redis.call('info', 'keyspace')", &[], &[]),
        (NO_SETUP, "redis.setresp(3) local r = redis.call('info', 'keyspace') return {r.verbatim_string.format, r.verbatim_string.string}", &[], &[]),
        (NO_SETUP, "return redis.call('nosuchcommand')", &[], &[]),
        (NO_SETUP, "redis.call('set','n',0.1) return redis.call('get','n')", &[], &[]),
        (NO_SETUP, "redis.call('set','n',3.0) return redis.call('get','n')", &[], &[]),
        (NO_SETUP, "redis.call('set','n',1e20) return redis.call('get','n')", &[], &[]),
        (NO_SETUP, "redis.call('set','n',-0.5) return redis.call('get','n')", &[], &[]),
        (NO_SETUP, "return redis.call('incrbyfloat','f',0.1)", &[], &[]),
        (NO_SETUP, "return {pcall(redis.call, 'set', 'a')}", &[], &[]),
        (NO_SETUP, "return redis.pcall('incr', 'x', 'y')", &[], &[]),
        (&[&["SET", "s", "abc"]], "local r = redis.pcall('incr', 's') return {type(r), r.err}", &[], &[]),
        (&[&["SET", "s", "abc"]], "return redis.call('incr', 's')", &[], &[]),
        (&[&["SET", "s", "abc"]], "return redis.call('lpush', 's', 'x')", &[], &[]),
        (&[&["SET", "s", "abc"]], "local ok, e = pcall(redis.call, 'lpush', 's', 'x') return e.err", &[], &[]),
    ]);
}

#[test]
fn errors_and_sandbox() {
    run_cases(&[
        (NO_SETUP, "print('x')", &[], &[]),
        (NO_SETUP, "a=1", &[], &[]),
        (NO_SETUP, "return a", &[], &[]),
        (NO_SETUP, "return os", &[], &[]),
        (NO_SETUP, "return io", &[], &[]),
        (NO_SETUP, "return loadfile", &[], &[]),
        (NO_SETUP, "return dofile", &[], &[]),
        (NO_SETUP, "return require", &[], &[]),
        (NO_SETUP, "return debug", &[], &[]),
        (NO_SETUP, "return newproxy", &[], &[]),
        (NO_SETUP, "return setfenv", &[], &[]),
        (NO_SETUP, "redis.call = 1", &[], &[]),
        (NO_SETUP, "redis.x = 1", &[], &[]),
        (NO_SETUP, "string.x = 1", &[], &[]),
        (NO_SETUP, "math.floor = nil", &[], &[]),
        (NO_SETUP, "cjson.encode = nil", &[], &[]),
        (NO_SETUP, "bit.x = 1", &[], &[]),
        (NO_SETUP, "_G.x = 1", &[], &[]),
        (NO_SETUP, "rawset(_G,'x',1)", &[], &[]),
        (NO_SETUP, "rawset(redis,'x',1)", &[], &[]),
        (NO_SETUP, "return rawget(_G,'x')", &[], &[]),
        (NO_SETUP, "return rawget(redis,'call') ~= nil", &[], &[]),
        (NO_SETUP, "setmetatable(_G, nil)", &[], &[]),
        (NO_SETUP, "setmetatable(redis, {})", &[], &[]),
        (NO_SETUP, "return getmetatable(redis)", &[], &[]),
        (NO_SETUP, "return type(getmetatable(_G).__index)", &[], &[]),
        (NO_SETUP, "getmetatable(_G).__index = nil", &[], &[]),
        (NO_SETUP, "getmetatable('').__index.x = 1", &[], &[]),
        (NO_SETUP, "getmetatable('').__index = nil", &[], &[]),
        (NO_SETUP, "return ('abc'):upper()", &[], &[]),
        (NO_SETUP, "local f = loadstring('x = 1') f()", &[], &[]),
        (NO_SETUP, "local f = loadstring('return 7') return f()", &[], &[]),
        (NO_SETUP, "coroutine.x = 1", &[], &[]),
        (NO_SETUP, "return coroutine.x", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(_G) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(redis) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(string) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(math) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(table) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(coroutine) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(bit) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(cjson) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local n=0 for k,v in next, redis do n=n+1 end return n", &[], &[]),
        (NO_SETUP, "local x = pairs()", &[], &[]),
        (NO_SETUP, "local x = pairs(nil)", &[], &[]),
        (NO_SETUP, "local x = rawget(1)", &[], &[]),
        (NO_SETUP, "local x = next({}, 'x')", &[], &[]),
        (NO_SETUP, "KEYS[1] = 'x' return KEYS[1]", &[], &[]),
        (NO_SETUP, "return _VERSION", &[], &[]),
        (NO_SETUP, "return type(gcinfo())", &[], &[]),
        (NO_SETUP, "error('my error')", &[], &[]),
        (NO_SETUP, "error({err='MYERR x'})", &[], &[]),
        (NO_SETUP, "error(nil)", &[], &[]),
        (NO_SETUP, "error(12)", &[], &[]),
        (NO_SETUP, "error('a\\nb')", &[], &[]),
        (NO_SETUP, "error('x', 0)", &[], &[]),
        (NO_SETUP, "error(redis.error_reply('MY x'))", &[], &[]),
        (NO_SETUP, "local function f() error('deep') end\n\nf()", &[], &[]),
        (NO_SETUP, "local t = nil\nreturn t.x", &[], &[]),
        (NO_SETUP, "return 1 + {}", &[], &[]),
        (NO_SETUP, "return 'x' .. (", &[], &[]),
        (NO_SETUP, "return redis.call()", &[], &[]),
        (NO_SETUP, "return redis.pcall()", &[], &[]),
        (NO_SETUP, "return redis.call({})", &[], &[]),
        (NO_SETUP, "return redis.pcall('get', {})", &[], &[]),
        (NO_SETUP, "return redis.call('get', nil)", &[], &[]),
        (NO_SETUP, "return redis.call('get', true)", &[], &[]),
        (NO_SETUP, "return redis.sha1hex('')", &[], &[]),
        (NO_SETUP, "return redis.sha1hex('abc')", &[], &[]),
        (NO_SETUP, "return redis.sha1hex(12)", &[], &[]),
        (NO_SETUP, "return redis.sha1hex()", &[], &[]),
        (NO_SETUP, "return redis.setresp(4)", &[], &[]),
        (NO_SETUP, "return redis.setresp()", &[], &[]),
        (NO_SETUP, "return redis.REDIS_VERSION .. ' ' .. redis.REDIS_VERSION_NUM", &[], &[]),
        (NO_SETUP, "return redis.replicate_commands()", &[], &[]),
        (NO_SETUP, "return redis.breakpoint()", &[], &[]),
        (NO_SETUP, "return redis.debug('x')", &[], &[]),
        (NO_SETUP, "return redis.set_repl(99)", &[], &[]),
        (NO_SETUP, "return redis.set_repl()", &[], &[]),
        (NO_SETUP, "return redis.set_repl(redis.REPL_ALL)", &[], &[]),
        (NO_SETUP, "return {redis.REPL_NONE,redis.REPL_AOF,redis.REPL_SLAVE,redis.REPL_REPLICA,redis.REPL_ALL}", &[], &[]),
        (NO_SETUP, "return {redis.LOG_DEBUG,redis.LOG_VERBOSE,redis.LOG_NOTICE,redis.LOG_WARNING}", &[], &[]),
        (NO_SETUP, "redis.log(99, 'x')", &[], &[]),
        (NO_SETUP, "redis.log(1)", &[], &[]),
        (NO_SETUP, "redis.log('x', 'y')", &[], &[]),
        (NO_SETUP, "return redis.acl_check_cmd()", &[], &[]),
        (NO_SETUP, "return redis.acl_check_cmd({})", &[], &[]),
        (NO_SETUP, "return redis.acl_check_cmd('get', 'x')", &[], &[]),
        (NO_SETUP, "return redis.acl_check_cmd('nosuch')", &[], &[]),
        (NO_SETUP, "#!lua flags=no-writes\nreturn 1", &[], &[]),
        (NO_SETUP, "#!lua flags=no-writes,bad\nreturn 1", &[], &[]),
        (NO_SETUP, "#!lua name=x\nreturn 1", &[], &[]),
        (NO_SETUP, "#!lua\nreturn 1", &[], &[]),
        (NO_SETUP, "#!luajit\nreturn 1", &[], &[]),
        (NO_SETUP, "#!lua", &[], &[]),
        (NO_SETUP, "#!lua\nerror('line two')", &[], &[]),
        (NO_SETUP, "#!lua flags=,\nreturn 1", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(error, {err='x'}) return e.err", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(error, 'x') return e", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(function() error('x') end) return e", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(redis.setresp, 9) return e.err", &[], &[]),
        (NO_SETUP, "local ok, e = xpcall(function() redis.call('set') end, function(e) return e end) return {tostring(ok), e.err}", &[], &[]),
        (NO_SETUP, "local co = coroutine.create(function() error('in co') end) return {coroutine.resume(co)}", &[], &[]),
        (NO_SETUP, "local co = coroutine.wrap(function(a) coroutine.yield(a + 1) end) return co(1)", &[], &[]),
        (NO_SETUP, "return select('#', 1, 2, 3)", &[], &[]),
        (NO_SETUP, "return tostring(1/3)", &[], &[]),
        (NO_SETUP, "return string.format('%5.2f|%d|%s|%q', 3.14159, 42, 'x', 'a\"b')", &[], &[]),
        (NO_SETUP, "return tonumber('0x10') + tonumber('  12  ')", &[], &[]),
        (NO_SETUP, "return unpack({1,2,3})", &[], &[]),
        (NO_SETUP, "return #table.concat({'a','b'}, ',')", &[], &[]),
    ]);
}

#[test]
fn cjson_round_trips_and_errors() {
    run_cases(&[
        (NO_SETUP, "return cjson.encode(string.char(127, 1, 47, 10, 34, 92, 8, 12, 9, 13))", &[], &[]),
        (NO_SETUP, "return cjson.encode({1,2,nil,4})", &[], &[]),
        (NO_SETUP, "return cjson.encode({[1]=1,[20]=2})", &[], &[]),
        (NO_SETUP, "return cjson.encode({[1.5]=1})", &[], &[]),
        (NO_SETUP, "return cjson.encode({[true]=1})", &[], &[]),
        (NO_SETUP, "return cjson.encode(function() end)", &[], &[]),
        (NO_SETUP, "return cjson.encode(1/0)", &[], &[]),
        (NO_SETUP, "return cjson.encode({0.1, 1/3, 1e15, 123456789012345, -0.0001, 1e-5})", &[], &[]),
        (NO_SETUP, "return cjson.encode({a={b={}}, [3]='x'})", &[], &[]),
        (NO_SETUP, "return cjson.encode({})", &[], &[]),
        (NO_SETUP, "return cjson.encode({a=1, b='two', c={1,2,3}, d=true, e=cjson.null})", &[], &[]),
        (NO_SETUP, "return cjson.encode()", &[], &[]),
        (NO_SETUP, "return cjson.encode(nil)", &[], &[]),
        (NO_SETUP, "local t = {} local c = t for i = 1, 1005 do c[1] = {} c = c[1] end return cjson.encode(t)", &[], &[]),
        (NO_SETUP, "return cjson.decode('')", &[], &[]),
        (NO_SETUP, "return cjson.decode('[1,')", &[], &[]),
        (NO_SETUP, "return cjson.decode('[1,]')", &[], &[]),
        (NO_SETUP, "return cjson.decode('{\"a\" 1}')", &[], &[]),
        (NO_SETUP, "return cjson.decode('{1:2}')", &[], &[]),
        (NO_SETUP, "return cjson.decode('{\"a\":1 \"b\"}')", &[], &[]),
        (NO_SETUP, "return cjson.decode('[1 2]')", &[], &[]),
        (NO_SETUP, "return cjson.decode('1 2')", &[], &[]),
        (NO_SETUP, "return cjson.decode('\"\\\\x\"')", &[], &[]),
        (NO_SETUP, "return cjson.decode('\"abc')", &[], &[]),
        (NO_SETUP, "return cjson.decode('0x10')", &[], &[]),
        (NO_SETUP, "return cjson.decode('-')", &[], &[]),
        (NO_SETUP, "return cjson.decode('x')", &[], &[]),
        (NO_SETUP, "return cjson.decode('tru')", &[], &[]),
        (NO_SETUP, "return tostring(cjson.decode('[1e400]')[1])", &[], &[]),
        (NO_SETUP, "return cjson.decode('\"\\\\ud83d\\\\ude00 \\\\u00e9\"')", &[], &[]),
        (NO_SETUP, "return cjson.decode('\"\\\\ud83d\"')", &[], &[]),
        (NO_SETUP, "return cjson.encode(cjson.decode('{\"a\":null}'))", &[], &[]),
        (NO_SETUP, "return cjson.decode('[1,2,[3,{\"x\":[true,false,null]}]]')[3][2].x[1]", &[], &[]),
        (NO_SETUP, "local t = cjson.decode('{\"a\":[1,2,3],\"b\":{\"c\":\"d\"}}') return {t.a[3], t.b.c}", &[], &[]),
        (NO_SETUP, "return cjson.encode(cjson.decode(ARGV[1]))", &[], &["{\"k\":[1,2.5,\"s\",{\"n\":null}]}"]),
        (NO_SETUP, "return cjson.encode({cjson.null})", &[], &[]),
        (NO_SETUP, "return cjson.encode_number_precision()", &[], &[]),
        (NO_SETUP, "return cjson.encode_max_depth()", &[], &[]),
        (NO_SETUP, "return {cjson._NAME, cjson._VERSION}", &[], &[]),
        (NO_SETUP, "return type(cjson.null)", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(cjson.decode, '{') return e", &[], &[]),
        (NO_SETUP, "local ok, e = pcall(function() return cjson.decode('{') end) return e", &[], &[]),
        (NO_SETUP, "return cjson.decode(12)", &[], &[]),
        (NO_SETUP, "return cjson.decode({})", &[], &[]),
    ]);
}

#[test]
fn struct_cmsgpack_bit_random() {
    run_cases(&[
        (NO_SETUP, "local t={} for k,v in pairs(cmsgpack) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "local t={} for k,v in pairs(struct) do t[#t+1]=k end table.sort(t) return t", &[], &[]),
        (NO_SETUP, "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}", &[], &[]),
        (NO_SETUP, "return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649)", &[], &[]),
        (NO_SETUP, "return cmsgpack.pack(0.5, 0.1, 1e300, -2.5, 1/0)", &[], &[]),
        (NO_SETUP, "return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('y', 32), string.rep('z', 300), string.rep('w', 70000))", &[], &[]),
        (NO_SETUP, "return cmsgpack.pack({}, {1,2,3}, {a=1}, {1,nil,3}, {[2]=1}, true, false, nil)", &[], &[]),
        (NO_SETUP, "local t = {} for i=1,20 do t[i]=i end return cmsgpack.pack(t)", &[], &[]),
        (NO_SETUP, "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)", &[], &[]),
        (NO_SETUP, "return cmsgpack.pack()", &[], &[]),
        (NO_SETUP, "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3, 4}, {x='y'}, -5, 0.25))}", &[], &[]),
        (NO_SETUP, "local t = cmsgpack.unpack(cmsgpack.pack({a={b={c='d'}}})) return t.a.b.c", &[], &[]),
        (NO_SETUP, "return cmsgpack.unpack('\\205')", &[], &[]),
        (NO_SETUP, "return cmsgpack.unpack('\\193')", &[], &[]),
        (NO_SETUP, "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", &[], &[]),
        (NO_SETUP, "local s = cmsgpack.pack(1, 2, 3) return {cmsgpack.unpack_one(s, 2)}", &[], &[]),
        (NO_SETUP, "local s = cmsgpack.pack(1, 2, 3) return {cmsgpack.unpack_limit(s, 2)}", &[], &[]),
        (NO_SETUP, "local s = cmsgpack.pack(1, 2, 3) return {cmsgpack.unpack_limit(s, 0, 1)}", &[], &[]),
        (NO_SETUP, "return struct.pack('>I2 <i4 b B h H', 258, -2, -1, 255, -300, 65535)", &[], &[]),
        (NO_SETUP, "return struct.pack('>l L d f', -5, 7, 1.5, 0.25)", &[], &[]),
        (NO_SETUP, "return struct.pack('c3 s c0', 'abcdef', 'zz', 'tail')", &[], &[]),
        (NO_SETUP, "return struct.pack('!4 b i4 b d', 1, 2, 3, 4)", &[], &[]),
        (NO_SETUP, "return {struct.unpack('>I2 <i4 b B', struct.pack('>I2 <i4 b B', 258, -2, -1, 255))}", &[], &[]),
        (NO_SETUP, "return {struct.unpack('s c2', 'hello\\0xyz')}", &[], &[]),
        (NO_SETUP, "return {struct.unpack('b c0', '\\3abcd')}", &[], &[]),
        (NO_SETUP, "return {struct.unpack('i4', 'ab')}", &[], &[]),
        (NO_SETUP, "return {struct.unpack('B', 'abc', 2)}", &[], &[]),
        (NO_SETUP, "return struct.size('>i4 h b d !8 d')", &[], &[]),
        (NO_SETUP, "return struct.pack('y', 1)", &[], &[]),
        (NO_SETUP, "return struct.pack('i40', 1)", &[], &[]),
        (NO_SETUP, "return {bit.tobit(0xffffffff), bit.tobit(2^32 + 5), bit.tohex(65535), bit.tohex(-1, -4), bit.tohex(255, 2), bit.tohex(1, 12)}", &[], &[]),
        (NO_SETUP, "return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3)}", &[], &[]),
        (NO_SETUP, "return {bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-16, 2), bit.rol(0x80000001, 1), bit.ror(1, 1), bit.bswap(0x01020304)}", &[], &[]),
        (NO_SETUP, "return {bit.lshift(1, 33), bit.tobit(-2.5), bit.tobit(2.5), bit.tobit(3.5)}", &[], &[]),
        (NO_SETUP, "return bit.band()", &[], &[]),
        (NO_SETUP, "return bit.tobit('x')", &[], &[]),
        (NO_SETUP, "return bit.tobit('12')", &[], &[]),
        (NO_SETUP, "math.randomseed(42) return {math.random(1,1000), math.random(1,1000), math.random(10), tostring(math.random())}", &[], &[]),
        (NO_SETUP, "math.randomseed(7) return tostring(math.random(5,9))", &[], &[]),
        (NO_SETUP, "return math.random(0)", &[], &[]),
        (NO_SETUP, "return math.random(3,1)", &[], &[]),
        (NO_SETUP, "return math.random(1,2,3)", &[], &[]),
    ]);
}
