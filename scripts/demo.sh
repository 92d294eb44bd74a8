#!/usr/bin/env bash
# 'make demo': runs the bundled demo server under load from the demo client, shows its threads
# with 'srvscope stacks', records two seconds of its scheduler events and shows why its
# threads wait ('blocking', 'sched', an off-CPU flame graph), then stops both. Exit status:
# that of the first srvscope command that fails, else 0.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CONNECTIONS=8
tmp=$(mktemp -d /tmp/srvscope-demo.XXXXXX)
server_pid=
client_pid=
scope_pid=

# stop PID: asks politely, then insists; also resumes it in case a tracer left it stopped.
stop() {
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -CONT "$pid" 2>/dev/null
	kill -INT "$pid" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

cleanup() {
	[ -n "$scope_pid" ] && stop "$scope_pid"
	[ -n "$client_pid" ] && stop "$client_pid"
	[ -n "$server_pid" ] && stop "$server_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for bin in srvscope demo-server demo-client; do
	if [ ! -x "$BUILD/$bin" ]; then
		echo "demo: $BUILD/$bin is missing: run 'make all' first" >&2
		exit 1
	fi
done

# Port 0: the kernel picks a free port, so the demo never collides with another server.
"$BUILD/demo-server" -p 0 -l "$tmp/server.log" >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
for i in $(seq 100); do
	grep -q ready "$tmp/server.out" && break
	if ! kill -0 "$server_pid" 2>/dev/null || [ "$i" -eq 100 ]; then
		echo "demo: demo-server did not start:" >&2
		cat "$tmp/server.err" >&2
		exit 1
	fi
	sleep 0.05
done
port=$(sed -n 's/^demo-server: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/server.err")

"$BUILD/demo-client" -p "$port" -c "$CONNECTIONS" -d 600 >"$tmp/client.out" 2>"$tmp/client.err" &
client_pid=$!
sleep 1 # let the load settle
if ! kill -0 "$client_pid" 2>/dev/null; then
	echo "demo: demo-client stopped early:" >&2
	cat "$tmp/client.err" >&2
	exit 1
fi

echo "demo: demo-server (pid $server_pid) on 127.0.0.1:$port, under load from $CONNECTIONS connections"
# run_scope ARGS...: srvscope in the background, so that a signal to this script is
# handled (trap) while it runs.
run_scope() {
	# To stderr: stdout may be redirected into a file the command writes.
	echo >&2
	echo "demo: \$ srvscope $*" >&2
	"$BUILD/srvscope" "$@" 2>"$tmp/srvscope.err" &
	scope_pid=$!
	wait "$scope_pid"
	status=$?
	scope_pid=
	cat "$tmp/srvscope.err" >&2
}
run_scope stacks -p "$server_pid"
if [ "$status" -eq 0 ]; then
	# Twenty snapshots 50 ms apart: where the workers spend their time, by share.
	run_scope stacks -p "$server_pid" -n 20 -i 50 >"$tmp/agg.txt"
	head -40 "$tmp/agg.txt"
	[ "$(wc -l <"$tmp/agg.txt")" -gt 40 ] && echo "    ..."
fi
if [ "$status" -eq 0 ]; then
	# Why the threads wait: two seconds of scheduler events, then the reports.
	run_scope record -p "$server_pid" -d 2 -o "$tmp/demo.trace" --no-progress
fi
if [ "$status" -eq 0 ]; then
	run_scope blocking "$tmp/demo.trace" --comm flusher >"$tmp/blocking.txt"
	head -10 "$tmp/blocking.txt"
	echo "    ..."
	sed -n '/^  Syscall /,$p' "$tmp/blocking.txt"
	# A worker's longer waits, with where it blocked and who woke it.
	run_scope blocking "$tmp/demo.trace" --comm worker-1 --min-ms 2 --stacks >"$tmp/stacks.txt"
	head -31 "$tmp/stacks.txt"
	echo "    ..."
	run_scope sched "$tmp/demo.trace" >"$tmp/sched.txt"
	head -12 "$tmp/sched.txt"
	# Off-CPU time by stack, heaviest first: user frames (unwound with DWARF CFI) then
	# the kernel's, up to where the thread slept.
	run_scope flame "$tmp/demo.trace" --kind=off >"$tmp/off.folded"
	sort -t' ' -k2 -nr "$tmp/off.folded" | head -5 | cut -c1-220
	mkdir -p "$BUILD"
	run_scope flame "$tmp/demo.trace" --kind=off --format=svg --title "demo-server off-CPU" \
		>"$BUILD/demo-offcpu.svg"
	echo "demo: interactive off-CPU flame graph: $BUILD/demo-offcpu.svg (open it in a browser)"
	run_scope timeline "$tmp/demo.trace" >"$BUILD/demo-timeline.json"
	echo "demo: every thread's timeline with wake-up arrows: $BUILD/demo-timeline.json (open it in https://ui.perfetto.dev)"
fi
if [ "$status" -ne 0 ]; then
	if grep -q "not built yet" "$tmp/srvscope.err"; then
		echo "demo: this build of srvscope does not have 'stacks' yet; stopping the demo" >&2
	else
		echo "demo: srvscope failed (exit status $status); stopping the demo" >&2
	fi
fi

stop "$client_pid"
client_pid=
echo "demo: client: $(cat "$tmp/client.out")"
stop "$server_pid"
server_pid=
grep -v 'listening on' "$tmp/server.err" | sed 's/^/demo: server: /'
exit "$status"
