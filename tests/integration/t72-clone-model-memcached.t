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
	# the clone modelled under the model's own runs (4, 8 and 16 connections reopened every
	# 0.5 s), its calls once a connection made by the thread that serves it: as many a
	# request as memcached's (the workers' getpeername and libevent's 3.4 epoll_ctl a
	# connection; before: one run of 16 accepted twice as often, getpeername -100 %,
	# epoll_ctl -70 %)
	like "$(cat "$TMP/check.err")" "modelling the clone \(srvscope model, the model's runs" \
		"--check models the clone under the model's runs"
	for sc in close getpeername epoll_ctl; do
		d=$(sed -n "s/^ *$sc .* \([-+][0-9]*\)%\$/\1/p" "$TMP/check.out")
		[ -n "$d" ] && [ "${d#[-+]}" -le 40 ]
		ok $? "--check: $sc a request within 40 % of memcached's (${d:-no row} %)"
	done
	[ -s "$TMP/check.err" ] && grep -v "^srvscope: clone --check:" "$TMP/check.err" | sed 's/^/#   /' | head -5

	# A model file can come from anyone: a cluster and a syscall named with terminal
	# escapes are printed escaped, never as the bytes (and ";" as \x3b, util/escape.h).
	python3 - "$TMP/memcached.json" "$TMP/evil.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["clusters"][0]["name"] = "\x1b]2;pwned\x07evil"
m["syscall_profile"]["syscalls"][0]["name"] = "\x1b[31mred"
json.dump(m, open(sys.argv[2], "w"))
PY
	timeout 60 "$SRVSCOPE" clone "$TMP/evil.json" --check -c 2 -r 200 -d 1 >"$TMP/evil.out" 2>"$TMP/evil.err"
	ok $? "clone --check runs with hostile names in the model"
	! grep -q "$(printf '\033')" "$TMP/evil.out"
	ok $? "--check prints no escape byte from the model"
	grep -qF '\x1b]2\x3bpwned\x07evil' "$TMP/evil.out" && grep -qF '\x1b[31mred' "$TMP/evil.out"
	ok $? "--check prints the hostile names escaped"
fi
done_testing
