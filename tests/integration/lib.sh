# Shared helpers for the TAP integration scripts (sourced, bash).
# Every script: `. "$(dirname "$0")/lib.sh"`, then ok/is/like checks, then `done_testing`.
# Fixture processes started with start_fixture are killed when the script exits. KEEP_FAILED=1:
# a script that failed a check keeps its temporary directory (its traces) to read.
set -u
: "${BUILD:=build}"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${SRVSCOPE:=$TOP/$BUILD/srvscope}"
: "${FIXTURES:=$TOP/$BUILD/fixtures}"
TMP=$(mktemp -d /tmp/srvscope-test.XXXXXX)
_n=0
_failed=0
_pids=""

cleanup() {
	exec 2>/dev/null # no job-control "Killed" lines after the plan
	for p in $_pids; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "$_failed" -gt 0 ] && [ -n "${KEEP_FAILED:-}" ]; then # a failing run's files, to read
		echo "# kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

ok() { # ok COND-EXIT-STATUS DESCRIPTION
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else
		echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi
}
check() { # check DESCRIPTION COMMAND...
	local d=$1; shift
	if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi
}
is() { # is GOT WANT DESCRIPTION (both on stderr when they differ: prove shows it)
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got '$1', want '$2'" >&2; fi
}
like() { # like TEXT REGEX DESCRIPTION (what was searched, on stderr when not found: prove shows it)
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else
		ok 1 "$3"
		{ echo "#   '$2' not found in:"; printf '%s\n' "$1" | head -20 | sed 's/^/#   /'; } >&2
	fi
}
diag() { echo "# $*"; }
# A test that cannot run here: a failure under CI=true (CI has root, BPF and BTF).
skip_all() {
	if [ "${CI:-}" = true ]; then echo "1..1"; echo "not ok 1 - cannot run under CI: $*"; exit 1; fi
	echo "1..0 # SKIP $*"; exit 0
}
need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }
# The recorder's BPF programs need the kernel's BTF.
need_btf() { [ -r /sys/kernel/btf/vmlinux ] || skip_all "no BTF (/sys/kernel/btf/vmlinux)"; }
. "$TOP/tests/integration/net.sh"
done_testing() { echo "1..$_n"; [ "$_failed" -eq 0 ]; exit $?; }

# start_fixture NAME ARGS...: starts a fixture, waits for it to print "ready", sets FPID
# and FOUT (the file its stdout and stderr go to).
start_fixture() {
	local bin=$1; shift
	local out="$TMP/fixture.$$.$RANDOM"
	FOUT=$out
	"$bin" "$@" >"$out" 2>&1 &
	FPID=$!
	_pids="$_pids $FPID"
	local i=0
	while ! grep -q ready "$out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 500 ] || ! kill -0 "$FPID" 2>/dev/null; then
			echo "# fixture $bin did not become ready"; cat "$out" | sed 's/^/#   /'; return 1
		fi
		sleep 0.01
	done
}
# Thread state letters of all threads of a pid, e.g. "SSSRt".
states_of() { cat /proc/"$1"/task/*/stat 2>/dev/null | sed 's/^.*) \(.\).*/\1/' | tr -d '\n'; }
tracer_of() { awk '/^TracerPid/ {print $2}' /proc/"$1"/status; }

# unprivileged CMD ARGS...: runs CMD without any capability. Not as another user: on a fresh
# machine the build lives under /root (0700), which another user cannot reach; root with
# an empty bounding set has no CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE or CAP_DAC_OVERRIDE.
unprivileged() {
	setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"
}

# new_netns: starts a process holding a new network namespace and sets NETNS to the
# namespace's path (/proc/PID/ns/net), once the process is in it. 'ip netns add' needs to change the
# propagation of /, which a chroot (a fresh-machine root) does not allow. The holder is
# killed with the fixtures.
new_netns() {
	unshare -n sleep 3600 >/dev/null 2>&1 &
	local p=$! i=0
	_pids="$_pids $p"
	while [ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$(readlink /proc/self/ns/net)" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && return 1
		sleep 0.01
	done
	[ -e /proc/$p/ns/net ] || return 1
	NETNS=/proc/$p/ns/net
}

# model NAME PID URL [OPTIONS...]: srvscope model of PID under the built-in client at URL
# into $TMP/NAME.json (90 s at most), one check; its output as comments, its errors too when
# it wrote no model. Returns its exit status. Not beside its skeleton (--no-skeleton: 6 s a
# model; t71-model-servers and t71-model-nginx measure it) unless SKELETON=1.
model() {
	local name=$1 pid=$2 url=$3 rc
	shift 3
	[ "${SKELETON:-}" = 1 ] || set -- --no-skeleton "$@"
	timeout 90 "$SRVSCOPE" model -p "$pid" --client "$url" -o "$TMP/$name.json" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	ok $rc "model $name"
	sed 's/^/#   /' "$TMP/$name.out"
	[ -s "$TMP/$name.json" ] || sed 's/^/#   /' "$TMP/$name.err"
	return $rc
}

# record_pingpong FILE: records the ping-pong fixture (200 rounds, 300 us apart) into FILE,
# one check; sets ping and pong to the two threads' ids.
record_pingpong() {
	"$SRVSCOPE" record -o "$1" -- "$FIXTURES/rec_pingpong" 200 300 >"$TMP/pp.out" 2>"$TMP/pp.err"
	ok $? "record the ping-pong"
	ping=$(awk '/^ping/ {print $2}' "$TMP/pp.out")
	pong=$(awk '/^pong/ {print $2}' "$TMP/pp.out")
}
