//! Differential tests: generic key and expiry commands against redis-server.
//! Script syntax: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn keys_generic() {
    diff_text(
        "keys_generic",
        r##"
mset a 1 b 2 c 3
del a b x
del c c
exists a b c
set a 1
exists a a a nokey
type a
type nokey
rename a b
get b
rename nokey x
rename b b
renamenx b b
rename nokey nokey
set c 3
renamenx b c
renamenx b d
get d
set e 1 ex 100
rename e f
ttl f   # exact
copy f g
ttl g   # exact
copy f g
copy f g replace
copy f f
copy f f db 1
copy f f db 16
copy f f db -1
copy f f db abc
copy f f foo
copy nokey z
move f 1
move f 1
move d 0
move d 99
move d abc
move d 9999999999999
select 1
get f
ttl f   # exact
select 0
dbsize
keys *   # unordered
keys ?   # unordered
keys [a-c]   # unordered
randomkey   # type
touch d c nokey
object encoding d
object refcount d
object idletime d   # any
object freq d
object encoding nokey
object help
object foo
object
swapdb 0 1
dbsize
swapdb 0 1
swapdb 0 abc
swapdb abc 0
swapdb 0 16
flushdb foo
flushdb async
dbsize
"##,
    );
}

#[test]
fn keys_expire() {
    diff_text(
        "keys_expire",
        r##"
set k v
flushall sync
dbsize
set k v
expire k 100
ttl k   # exact
pttl k   # type
expire k 100 nx
expire k 200 xx
ttl k   # exact
expire k 50 gt
expire k 500 gt
expire k 1000 lt
expire k 10 lt
ttl k   # exact
expire k 10 nx xx
expire k 10 gt lt
expire k 10 foo
expire k abc
expire k 9223372036854775807
pexpire k 9223372036854775807
expireat k 9223372036854775807
pexpireat k 9223372036854775807
persist k
persist k
ttl k   # exact
expiretime k
pexpiretime nokey
expire nokey 10
expireat k 4102444800
expiretime k
pexpireat k 4102444800123
pexpiretime k
expiretime k
expire k -1
exists k
set k v
pexpireat k 0
exists k
set k v
expire k 0
exists k
set k v
persist k xx
expire k 10 gt
expire k 10 lt
ttl k   # exact
ttl nokey   # exact
pttl nokey
scan abc
scan 0 count 0
scan 0 count abc
scan 0 foo bar
scan 0 match
"##,
    );
}

/// OBJECT REFCOUNT tells Redis's shared integers (0..9999, INT_MAX) from
/// integers of their own (1): COPY duplicates the object, and while
/// `maxmemory` is set with an LRU or LFU policy new integers are not
/// shared; a value keeps what it was made with.
#[test]
fn object_refcount_of_shared_and_own_integers() {
    diff_text_with(
        "object_refcount_of_shared_and_own_integers",
        r##"
set a 1
object refcount a
copy a b
object refcount b
object encoding b
get b
incr b
object refcount b
set big 10000
object refcount big
copy big big2
object refcount big2
set s hello
copy s s2
object refcount s2
config set maxmemory 1gb
config set maxmemory-policy allkeys-lru
object refcount a
set c 5
object refcount c
incr c
object refcount c
mset d 7 e 8
object refcount d
setnx f 9
object refcount f
getset f 3
object refcount f
append g 4
object refcount g
incrby h 2
object refcount h
config set maxmemory-policy volatile-lfu
set i 6
object refcount i
config set maxmemory-policy allkeys-random
set j 6
object refcount j
config set maxmemory 0
config set maxmemory-policy allkeys-lru
set k 6
object refcount k
object refcount c
config set maxmemory 1gb
config set maxmemory-policy allkeys-lfu
debug reload
object refcount a
object refcount k
object refcount big
config set maxmemory 0
debug reload
object refcount a
object refcount k
config set maxmemory-policy noeviction
"##,
        &DiffOpts::new(&[("enable-debug-command", "yes")]),
    );
}

/// SCAN deletes the expired keys it meets (with active expiry off, so
/// only SCAN can): DBSIZE and DEBUG DIGEST agree right after it, also
/// for a SCAN inside a script.
#[test]
fn scan_deletes_the_expired_keys_it_meets() {
    diff_text_with(
        "scan_deletes_the_expired_keys_it_meets",
        r##"
debug set-active-expire 0
set a 1
set b 2 px 1
set c 3 px 1
@sleep 20
dbsize
scan 0 count 1000   # unordered
dbsize
debug digest
set d 4 px 1
@sleep 20
eval "for i = 1, 3 do redis.call('SCAN', 0, 'COUNT', 5) end return 1" 0
dbsize
debug digest
debug set-active-expire 1
"##,
        &DiffOpts::new(&[("enable-debug-command", "yes")]),
    );
}
