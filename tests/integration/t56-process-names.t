#!/bin/bash
# Telling processes apart (issue 8, item 10): the processes of one server share a name, not
# a command line or title, so 'stacks' and the trace reports show it; a program started
# through a symlink (redis-server -> redis-check-rdb) has its frames named after the link.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

# A title set in place of the arguments (exec -a: argv[0] is "myserver: worker 3").
bash -c 'exec -a "myserver: worker 3" sleep 30' &
tp=$!
_pids="$_pids $tp"
sleep 0.3
like "$("$SRVSCOPE" stacks -p "$tp" | sed -n 2p)" "^command: myserver: worker 3 30$" \
	"stacks text: the command line under the header"
like "$("$SRVSCOPE" stacks -p "$tp" --format=json)" '"title": "myserver: worker 3 30"' \
	"stacks JSON: title"
"$SRVSCOPE" record -p "$tp" -d 0.5 -o "$TMP/title.trace" >/dev/null 2>&1
ok $? "record it"
like "$("$SRVSCOPE" blocking "$TMP/title.trace" | sed -n 2p)" "^  command: myserver: worker 3 30$" \
	"blocking text: the title the recording saw"
like "$("$SRVSCOPE" blocking --format=json "$TMP/title.trace")" '"title": "myserver: worker 3 30"' \
	"blocking JSON: title"
# A command the recording starts itself: its command line.
# A second: under ASan and load, the recorder may read the title only tenths after the exec.
"$SRVSCOPE" record -o "$TMP/plain.trace" -- sleep 1 >/dev/null 2>&1
like "$("$SRVSCOPE" blocking --min-ms 100 "$TMP/plain.trace" | sed -n 2p)" "^  command: sleep 1$" \
	"a recorded command has its command line too"
like "$("$SRVSCOPE" sched --format=json "$TMP/plain.trace")" '"title": "sleep 1"' "sched JSON: title"
like "$("$SRVSCOPE" timeline "$TMP/title.trace")" \
	'"name":"process_name",[^}]*"args":\{"name":"myserver: worker 3 30"\}' \
	"timeline: the process track is named by its title"

# A fixture started through a symlink: its frames are in the link's name.
ln -s "$FIXTURES/rec_sleeper" "$TMP/sleeper-alias"
start_fixture "$TMP/sleeper-alias" 10 || exit 1
out=$("$SRVSCOPE" stacks -p "$FPID")
like "$out" "sleep_(seven|three)  \(sleeper-alias\)$" "frames of the executable named after the symlink"
check "not after its target" sh -c "! printf '%s' \"\$1\" | grep -q '(rec_sleeper)'" - "$out"
out=$("$SRVSCOPE" stacks -p "$FPID" --mode=ptrace)
like "$out" "sleep_(seven|three)  \(sleeper-alias\)$" "the same in ptrace mode"

# redis: every frame of redis was shown in module redis-check-rdb.
command -v redis-server >/dev/null || skip_all "redis-server is missing (scripts/install-deps.sh)"
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	>"$TMP/redis.log" 2>&1 &
rp=$!
_pids="$_pids $rp"
for _ in $(seq 100); do grep -q "Ready to accept" "$TMP/redis.log" && break; sleep 0.05; done
out=$("$SRVSCOPE" stacks -p "$rp")
like "$out" "\(redis-server\)$" "redis frames in module redis-server"
check "none in redis-check-rdb" sh -c "! printf '%s' \"\$1\" | grep -q 'redis-check-rdb'" - "$out"
like "$(printf '%s\n' "$out" | sed -n 2p)" "^command: redis-server 127.0.0.1:$port" "redis's title"
kill "$rp"

done_testing
