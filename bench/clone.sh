#!/bin/bash
# bench/clone.sh: each original server (memcached -t 4, redis-server, nginx with 2 workers)
# beside its srvscope clone, in one run on one machine, under the same built-in load:
# p50 latency at a fixed rate (the model's, or RATE), CPU per request (the whole process
# tree's CPU time from /proc/PID/task/*/schedstat over the fixed-rate run), peak throughput (closed
# loop). ROUNDS rounds (medians): in each, the fixed-rate loads on original and clone at
# once (both see the same machine; TURNS=1: in turns), then the peaks in turns, the order
# swapped every round, so a busy machine weighs on both alike; the ratios are printed
# twice: of the medians, and "paired", the median of each round's clone/original.
# The clones are of tests/fixtures/models/*.json (written from these servers), or of
# models made here by `srvscope model` when srvscope has it (MODEL=fixture forces the
# former). Prints the table and the clone/original ratios (goal: 0.85 to 1.15), and "drift":
# the original's CPU per request in the rounds over its model's microseconds (how far the
# machine moved since; a clone of a model measured beside its skeleton aims at the ratio
# instead, which VERBOSE=1 prints, and follows the machine).
#   ROUNDS=3 SECS=3 [TURNS=1] [CONNS=N] [RATE=R] [RATES="R1 R2 ..."] [SERVERS="memcached redis nginx"] [VERBOSE=1] bench/clone.sh
# (the load: the model's last run's connections and rate, the load its CPU per request was
# measured under without the recorder, unless CONNS and RATE say otherwise)
# (RATES: the models' runs at those rates, CONNS (8) connections, 2 s each, instead of the
# defaults (three at 2000 req/s): a background thread whose wake-ups follow the load is
# cloned so, docs/clone.md; e.g. RATES="200 2000" RATE=200 for CPU per request at 200)
# (QOS=1: the CPUs kept out of idle states for the run, /dev/cpu_dma_latency held at 0 (a VM's
# haltpoll idle then polls and never halts): a thread woken on an idle CPU costs the same
# every time, where a halted vCPU's wake-up made one original's CPU per request move by
# a factor of 1.8 from round to round, docs/clone.md)
# (VERBOSE=1: every round's figures, CPU and wake-ups per request by thread name, and the
# model's cpu_unrecorded and background threads' CPU per wake-up on stderr; CLONE_ARGS:
# more options for the clones, e.g. "--cpu-us 0")
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/memcached.sh"
bench_need clone.sh memcached redis-server nginx python3
ROUNDS=${ROUNDS:-3} SECS=${SECS:-3} rates="" conns_used=""
SERVERS=${SERVERS:-"memcached redis nginx"}

tree() { local c; echo "$1"; for c in $(pgrep -P "$1"); do tree "$c"; done; }
# tree_cpu PID: nanoseconds on CPU of the tree's threads (schedstat: exact, where utime and
# stime come in clock ticks, 8 % of a 3 s run at 2000 req/s), and the root's reaped
# children (cutime + cstime, ticks: a process per connection)
tree_cpu() {
	local p t=0 f a
	for p in $(tree "$1"); do
		for f in /proc/"$p"/task/*/schedstat; do
			read -r a _ <"$f" 2>/dev/null && t=$((t + a))
		done
		if [ "$p" = "$ROOT" ] && f=$(sed 's/^.*) //' /proc/"$p"/stat 2>/dev/null); then
			set -- $f
			t=$((t + (${14} + ${15}) * 1000000000 / $(getconf CLK_TCK)))
		fi
	done
	echo $t
}
# threads_snap PID FILE: each thread of the tree, "comm runtime_ns voluntary_switches"
# (VERBOSE=1: where the CPU per request goes, thread name by thread name)
threads_snap() {
	local p t c a w
	for p in $(tree "$1"); do
		for t in /proc/"$p"/task/*; do
			read -r a _ <"$t/schedstat" 2>/dev/null || continue
			w=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status" 2>/dev/null)
			c=$(tr ' ' _ <"$t/comm" 2>/dev/null)
			echo "${t##*/} ${c:-?} $a ${w:-0}"
		done
	done >"$2"
}
# by_comm BEFORE AFTER REQUESTS: CPU us and wake-ups per request by thread name
by_comm() {
	python3 - "$@" <<'PY'
import sys, collections
def rd(f):
    return {l.split()[0]: l.split()[1:] for l in open(f) if len(l.split()) == 4}
a, b, n = rd(sys.argv[1]), rd(sys.argv[2]), int(sys.argv[3])
cpu, wk = collections.Counter(), collections.Counter()
for t, (c, r, w) in b.items():
    r0, w0 = (int(a[t][1]), int(a[t][2])) if t in a else (0, 0)
    cpu[c] += int(r) - r0
    wk[c] += int(w) - w0
print(" ".join("%s %.1fus/%.2fwk" % (c, cpu[c] / 1e3 / n, wk[c] / n) for c, _ in cpu.most_common() if cpu[c] / 1e3 / n >= 0.05))
PY
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

start_original() { # NAME PORT: sets ROOT
	case $1 in
	memcached) memcached -u nobody -t 4 -p "$2" -U 0 -l 127.0.0.1 -m 64 & ROOT=$! ;;
	redis)
		mkdir -p "$OUT/redis"
		redis-server --port "$2" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$OUT/redis" --daemonize no >"$OUT/redis.log" 2>&1 &
		ROOT=$! ;;
	nginx)
		nginx_conf "$OUT/nginx" "$2" 2 "access_log off;" '; location / { return 200 "hello\n"; }'
		nginx -p "$OUT/nginx" -c "$OUT/nginx/nginx.conf" -e "$OUT/nginx/logs/error.log" & ROOT=$! ;;
	esac
	BENCH_PIDS="$BENCH_PIDS $ROOT"
	wait_port "$2" "$ROOT" || { echo "clone.sh: $1 did not start" >&2; exit 1; }
}

url() { case $1 in memcached) echo "memcached://127.0.0.1:$2" ;; redis) echo "redis://127.0.0.1:$2" ;; nginx) echo "http://127.0.0.1:$2/" ;; esac; }

# Each server of a pair is o (the original) or c (its clone): ROOT[o], URL[o], and its
# files $OUT/o.NAME.*. fixed_start W: the fixed-rate load on it, in the background (a load
# that outlives its duration by 10 s is killed: one was seen to spin after its end);
# fixed_end W: waits for it, appends "p50 cpu_us" to $OUT/W.NAME.fixed. A clone calibrates
# its work per request on its first few thousand requests, under the load its model was
# taken with: the fixed rate comes first in a round.
declare -A ROOT URL LOAD
fixed_start() {
	local f="$OUT/$1.$s"
	[ -n "${VERBOSE:-}" ] && threads_snap "${ROOT[$1]}" "$f.snap0"
	tree_cpu "${ROOT[$1]}" >"$f.c0"
	timeout -k 2 $((SECS + 10)) "$SRVSCOPE" load "${URL[$1]}" -c "$conns" -r "$rate" -d "$SECS" >"$f.load" 2>&1 &
	LOAD[$1]=$!
}
fixed_end() {
	local f="$OUT/$1.$s" c0 c1 n p50
	wait "${LOAD[$1]}"
	c1=$(tree_cpu "${ROOT[$1]}")
	c0=$(cat "$f.c0")
	n=$(sed -n 's/^\([0-9]*\) req in.*/\1/p' "$f.load")
	if [ -n "${VERBOSE:-}" ] && [ "${n:-0}" -gt 0 ]; then
		threads_snap "${ROOT[$1]}" "$f.snap1"
		echo "$1.$s: $(by_comm "$f.snap0" "$f.snap1" "$n")" >>"$OUT/threads"
	fi
	p50=$(sed -n 's/.* p50 \([0-9.]*\) .*/\1/p' "$f.load")
	[ -n "$p50" ] && [ "${n:-0}" -gt 0 ] ||
		{ echo "clone.sh: the load on $1.$s failed: $(cat "$f.load")" >&2; exit 1; }
	echo "$p50 $(awk -v t=$((c1 - c0)) -v n="$n" 'BEGIN {printf "%.1f", t / 1e3 / n}')" >>"$f.fixed"
}
# peak W: the closed-loop load alone, appends its req/s to $OUT/W.NAME.peak
peak() {
	local out p
	out=$(timeout -k 2 $((SECS + 10)) "$SRVSCOPE" load "${URL[$1]}" -c "$conns" -r 0 -d "$SECS" 2>&1)
	p=$(echo "$out" | sed -n 's/.* s, \([0-9.]*\) req\/s.*/\1/p')
	[ -n "$p" ] || { echo "clone.sh: the load on $1.$s failed: $out" >&2; exit 1; }
	echo "$p" >>"$OUT/$1.$s.peak"
}

if [ -n "${QOS:-}" ]; then
	# held open for the whole run: the request ends when the file is closed
	exec 8>/dev/cpu_dma_latency && printf 0 >&8 ||
		{ echo "clone.sh: QOS=1 needs /dev/cpu_dma_latency (root)" >&2; exit 1; }
fi
use_model=fixture
[ "${MODEL:-}" != fixture ] && "$SRVSCOPE" model --help >/dev/null 2>&1 && use_model=srvscope
load0=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%-10s %-9s %12s %12s %14s\n' server who "peak req/s" "p50 us" "CPU us/req"
for s in $SERVERS; do
	op=$(free_port)
	start_original "$s" "$op"
	orig=$ROOT
	model="$TOP/tests/fixtures/models/$s.json"
	if [ $use_model = srvscope ]; then
		cfg=()
		if [ -n "${RATES:-}" ]; then
			printf '{"runs": [%s]}\n' "$(for r in $RATES; do printf '{"conns": %d, "rate": %s, "duration_s": 2}\n' "${CONNS:-8}" "$r"; done | paste -sd,)" >"$OUT/runs.json"
			cfg=(--config "$OUT/runs.json")
		fi
		"$SRVSCOPE" model -p "$orig" --client "$(url "$s" "$op")" "${cfg[@]}" -o "$OUT/$s.model.json" \
			>/dev/null 2>"$OUT/$s.model.err" && model="$OUT/$s.model.json" ||
			echo "clone.sh: srvscope model of $s failed ($(tail -1 "$OUT/$s.model.err")); the fixture model instead" >&2
	fi
	cp_=$(free_port)
	"$SRVSCOPE" clone "$model" --port "$cp_" -q ${CLONE_ARGS:-} &
	clone=$!
	BENCH_PIDS="$BENCH_PIDS $clone"
	wait_port "$cp_" "$clone" || { echo "clone.sh: the clone of $s did not start" >&2; exit 1; }
	# the model's last run's load: its rate (2000 when closed loop) and connections (8)
	read -r mrate mconns < <(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["runs"]; l = r[-1] if r else {}; print(l.get("rate") or 2000, l.get("conns") or 8)' "$model")
	rate=${RATE:-$mrate}
	rates="$rates $s:$rate"
	conns=${CONNS:-$mconns}
	conns_used="$conns_used $s:$conns"
	: >"$OUT/o.$s.fixed"; : >"$OUT/c.$s.fixed"; : >"$OUT/o.$s.peak"; : >"$OUT/c.$s.peak"
	ROOT[o]=$orig ROOT[c]=$clone URL[o]=$(url "$s" "$op") URL[c]=$(url "$s" "$cp_")
	# By default the fixed-rate loads run on both at once (each server's load at the rate,
	# 2000 req/s: a few per cent of a CPU each), so both see the same machine: in turns, on
	# this VM, an original's CPU per request went from 20 to 39 us between two rounds of
	# one run, its clone's staying at 23 to 25. The peaks cannot share the machine: in turns,
	# the order swapped every round (original first, then clone first, ...), so that a
	# machine getting busier or quieter over the rounds weighs on both alike. TURNS=1:
	# the fixed-rate loads in turns too, each server's before its peak.
	for r in $(seq "$ROUNDS"); do
		first=o second=c
		[ $((r % 2)) = 0 ] && first=c second=o
		if [ -n "${TURNS:-}" ]; then
			for w in $first $second; do fixed_start $w; fixed_end $w; peak $w; done
		else
			fixed_start o; fixed_start c; fixed_end o; fixed_end c
			peak $first; peak $second
		fi
	done
	for who in o c; do # "peak p50 cpu_us" a round
		paste -d' ' "$OUT/$who.$s.peak" "$OUT/$who.$s.fixed" >"$OUT/$who.$s"
	done
	if [ -n "${VERBOSE:-}" ]; then # every round, and the model's CPU per request unrecorded
		paste "$OUT/o.$s" "$OUT/c.$s" | sed "s/^/$s rounds (original | clone): /" >&2
		sed "s/^/$s threads, CPU us and wake-ups per request at the fixed rate: /" "$OUT/threads" >&2
		: >"$OUT/threads"
		python3 -c 'import json, sys; print(sys.argv[2], "model:", json.load(open(sys.argv[1]))["syscall_profile"].get("cpu_unrecorded"))' "$model" "$s" >&2
		# and its slices, at the rate then at peak (a slice far from the others: the machine
		# busy with other work meanwhile)
		[ -f "$OUT/$s.model.err" ] && sed -n "s/^srvscope: model: slices/$s model: slices/p" "$OUT/$s.model.err" >&2
		# and beside its skeleton (the ratio the clone aims at)
		[ -f "$OUT/$s.model.err" ] && sed -n "s/^srvscope: model: CPU per request \(.*beside.*\)/$s model: \1/p" "$OUT/$s.model.err" >&2
		# its background threads' CPU per wake-up (unrecorded, at its last run), wake floor and
		# wake-ups a second in each run: what the clone's network threads make up for
		python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["clusters"]:
    w = c.get("work") or {}
    if c.get("role") == "background" and w:
        print(sys.argv[2], "model background:", c["name"], "us/wake-up", w.get("on_cpu_us_unrecorded", w.get("on_cpu_us")), "floor", w.get("wake_floor_us"), "wake-ups/s", [r.get("wakes_per_s") for r in w.get("per_run") or []])' "$model" "$s" >&2
	fi
	for who in o c; do
		for col in 1 2 3; do
			eval "${who}$col=$(awk -v c=$col '{print $c}' "$OUT/$who.$s" | median)"
		done
	done
	printf '%-10s %-9s %12.0f %12.0f %14.1f\n' "$s" original "$o1" "$o2" "$o3"
	printf '%-10s %-9s %12.0f %12.0f %14.1f\n' "$s" clone "$c1" "$c2" "$c3"
	printf '%-10s %-9s %12s %12s %14s\n' "$s" ratio "$(awk -v a="$c1" -v b="$o1" 'BEGIN {printf "%.2f", a / b}')" \
		"$(awk -v a="$c2" -v b="$o2" 'BEGIN {printf "%.2f", a / b}')" "$(awk -v a="$c3" -v b="$o3" 'BEGIN {printf "%.2f", a / b}')"
	# each round's clone against the original beside it, the median of those: the machine's
	# drift between rounds (the originals' own peaks moved by a fifth between runs) cancels
	printf '%-10s %-9s %12s %12s %14s\n' "$s" paired $(for col in 1 2 3; do
		paste -d' ' "$OUT/c.$s" "$OUT/o.$s" | awk -v c=$col '{printf "%.5f\n", $c / $(c + 3)}' | median |
			awk '{printf "%.2f", $1}'; echo; done)
	# the original's CPU per request in the rounds over its model's (unrecorded, at the
	# model's rate), which a clone without the skeleton's ratio aims at: how far the machine moved between the model's
	# seconds and the rounds' minutes; outside 0.85 to 1.15, the clone's CPU ratio says more
	# of the machine than of the clone. The rounds' figure is the whole tree's, the model's
	# its network threads': memcached's LRU maintainer (7 to 9 us a request at 2000 req/s,
	# which the clone's background thread reproduces apart) puts its drift about 1.3 higher
	mcpu=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["syscall_profile"].get("cpu_unrecorded") or []
print("%.1f" % c[0]["cpu_us_per_request"] if c else "")' "$model" 2>/dev/null)
	[ -n "$mcpu" ] && printf '%-10s %-9s %12s %12s %14s  (original over its model, %s us: the machine since)\n' "$s" drift - - \
		"$(awk -v a="$o3" -v b="$mcpu" 'BEGIN {printf "%.2f", a / b}')" "$mcpu"
	kill "$clone"; wait "$clone" 2>/dev/null
	kill "$orig"; wait "$orig" 2>/dev/null
done
echo "(medians of $ROUNDS rounds; fixed rate $([ -n "${TURNS:-}" ] && echo in turns || echo on both at once), peaks in turns; connections:$conns_used; p50 and CPU at the model's rate (req/s:$rates); peak closed loop; $SECS s each; models: $use_model${RATES:+ (runs at $RATES req/s)}; load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end${QOS:+; CPUs kept out of idle states})"
