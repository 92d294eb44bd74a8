#!/bin/bash
# The issue's structural check (clone_models_match, t72-clone-lib.sh) for memcached -t 4:
# `srvscope model` of its clone gives memcached's model; and clone --check.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/t72-clone-lib.sh"
need_root
need_btf
need_servers memcached

start_memcached 4 || ok 1 "memcached starts"
[ $_failed -eq 0 ] && clone_models_match memcached "$MEMCACHED_PID" "memcached://127.0.0.1:$MEMCACHED_PORT"

# clone --check does the same in one command: it starts the clone, loads it, models it with
# srvscope model and prints both network models side by side.
if [ -s "$TMP/memcached.json" ]; then
	timeout 120 "$SRVSCOPE" clone "$TMP/memcached.json" --check >"$TMP/check.out" 2>"$TMP/check.err"
	ok $? "clone --check runs"
	out=$(cat "$TMP/check.out")
	like "$out" "srvscope model of the clone" "--check models the clone with srvscope model"
	like "$out" "fields that differ +none" "--check: no network model field differs"
	like "$out" "network_thread_pool_size +4 +4" "--check: network pool 4 and 4"
	[ -s "$TMP/check.err" ] && grep -v "^srvscope: clone --check:" "$TMP/check.err" | sed 's/^/#   /' | head -5
fi
done_testing
