//! Differential tests: string commands against redis-server.
//! Script syntax: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn strings_0() {
    diff_text(
        "strings_0",
        r##"
set foo bar
get foo
get nokey
set foo bar nx
set foo bar2 xx
get foo
set foo bar3 xx get
set newk v nx get
set newk v2 nx get
set foo v ex 100 px 100
set foo v ex 100 keepttl
set foo v ex 0
set foo v ex -1
set foo v ex abc
set foo v px 9223372036854775807
set foo v ex 9223372036854775
set foo v nx xx
set foo v get get
set foo v badopt
set foo v ex
set foo v EX 100 EX 200
ttl foo
set foo 12345
object encoding foo
object refcount foo
set foo 123456789012
object encoding foo
object refcount foo
set foo "a string that is definitely longer than forty four bytes for sure"
object encoding foo
set foo abc
object encoding foo
append foo def
object encoding foo
get foo
strlen foo
strlen nokey
append newk2 123
object encoding newk2
setnx foo x
setnx fresh x
setex foo 100 v
ttl foo
setex foo 0 v
setex foo abc v
"##,
    );
}

#[test]
fn strings_1() {
    diff_text(
        "strings_1",
        r##"
psetex foo 100000 v
psetex foo -5 v
getex foo
getex foo persist
ttl foo
getex foo ex 100
ttl foo
getex foo ex 100 persist
getex foo nx
getex foo exat 1
exists foo
getex nokey ex 10
getdel fresh
getdel fresh
getset fresh a
getset fresh b
mset a 1 b 2 c 3
mget a b c d
mset a 1 b
msetnx a 1 zz 2
msetnx yy 1 zz 2
mget yy zz
incr a
incrby a 10
decr a
decrby a 5
incrby a abc
decrby a -9223372036854775808
set big 9223372036854775807
incr big
set neg -9223372036854775808
decr neg
set s hello
incr s
set f 10.50
incrbyfloat f 0.1
incrbyfloat f -5.0e3
incrbyfloat f abc
incrbyfloat s 1
incrbyfloat nf 3
object encoding nf
set f 5.0e3
incrbyfloat f 2.0e2
set sp " 1"
incr sp
"##,
    );
}

#[test]
fn strings_2() {
    diff_text(
        "strings_2",
        r##"
incrbyfloat sp 1
set s "Hello World"
getrange s 0 4
getrange s -5 -1
getrange s 5 2
getrange s -1 -5
getrange s 0 100
getrange s 100 200
getrange nokey 0 10
substr s 0 3
getrange s a 1
setrange s 6 Redis
get s
setrange s 20 X
get s
setrange s -1 X
setrange nokey 0 ""
exists nokey
setrange nokey2 5 abc
get nokey2
setrange s 0 ""
setrange s 536870911 x
setrange s 536870912 x
mset key1 ohmytext key2 mynewtext
lcs key1 key2
lcs key1 key2 len
lcs key1 key2 idx
lcs key1 key2 idx minmatchlen 4
lcs key1 key2 idx withmatchlen
lcs key1 key2 idx withmatchlen minmatchlen 4 len
lcs key1 key2 idx len
lcs key1 nokey
lcs key1 key2 foo
get
set foo
mget
getex foo px 100 ex 100
set foo v pxat 1
get foo
set foo v exat 99999999999
ttl foo
"##,
    );
}

/// Heap strings around the packing limits: values of 15-70 chars over the
/// 6-bit alphabet, ASCII and binary, stored packed or plain by petrel, read
/// back, edited in place (which Redis reports as raw) and given TTLs.
#[test]
fn strings_heap_encodings() {
    let mut script = String::new();
    let digits = "1234567890".repeat(7);
    let ascii = "Hello, World! ~ {} [] ()".repeat(3);
    for n in [
        15, 16, 17, 18, 19, 20, 21, 22, 32, 33, 40, 42, 43, 44, 45, 48, 49, 54, 63, 64, 65, 70,
    ] {
        let d = &digits[..n];
        let a = &ascii[..n];
        script.push_str(&format!(
            "SET d{n} {d}\nGET d{n}\nSTRLEN d{n}\nOBJECT ENCODING d{n}\nGETRANGE d{n} 3 -3\n\
             SET a{n} \"{a}\"\nGET a{n}\nOBJECT ENCODING a{n}\nSUBSTR a{n} -5 -1\n\
             SET b{n} \"{}\"\nGET b{n}\nOBJECT ENCODING b{n}\n\
             APPEND d{n} x\nGET d{n}\nOBJECT ENCODING d{n}\n\
             SETRANGE a{n} 2 \"_\"\nGET a{n}\nOBJECT ENCODING a{n}\n\
             SET e{n} {d} EX 1000\nTTL e{n}\nGET e{n}\nSETBIT e{n} 3 1\nGET e{n}\nTTL e{n}\nOBJECT ENCODING e{n}\n\
             SET f{n} {d}\nBITCOUNT f{n}\nBITPOS f{n} 0\nGETBIT f{n} 9\nBITFIELD f{n} INCRBY u8 0 1\nGET f{n}\nOBJECT ENCODING f{n}\n\
             GETEX d{n} PX 100000\nPTTL d{n}   # type\nGETSET b{n} {d}\nOBJECT ENCODING b{n}\nCOPY b{n} c{n}\nGET c{n}\nOBJECT ENCODING c{n}\n\
             RENAME c{n} r{n}\nGET r{n}\nGETDEL r{n}\nEXISTS r{n}\n",
            "\\xe9".repeat(n / 2 + 1)
        ));
    }
    script.push_str(
        "SET big 12345678901234567890\nOBJECT ENCODING big\nINCR big\nGET big\n\
         SET fl 1.5000000000000000000000000000000000000001\nINCRBYFLOAT fl 1\nGET fl\nOBJECT ENCODING fl\n\
         SET m 1234567890123456789012345678901234567890\nMSET m2 1234567890123456789012345678901234567890 m3 abcdefghijabcdefghijabcdefghijabcdefghij\n\
         MGET m m2 m3\nOBJECT ENCODING m3\nLCS m m2 LEN\nSETRANGE m3 100 x\nSTRLEN m3\nOBJECT ENCODING m3\n\
         SETEX sx 100 abcdefghijabcdefghijabcdefghijabcdefghij\nOBJECT ENCODING sx\nGET sx\n",
    );
    diff_text("strings_heap_encodings", &script);
}
