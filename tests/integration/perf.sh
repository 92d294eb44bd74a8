# perf beside 'srvscope cpu' on one window (sourced after lib.sh by the t74 tests).
#
# perf samples every CPU (-a) with a cpu-clock event of a fixed period, 190011 ns, 5 %
# off srvscope's 200040 ns at 4999 Hz, so that neither timer keeps firing just after the
# other's interrupt; no build ids, no call graphs: perf -a meets every process on the
# machine and only the sampled function is compared; 'timeout': a DSO path of another
# process that became a FIFO would hold perf's end forever. perf starts first, with
# CLOCK_MONOTONIC timestamps (-k mono), and its samples are cut to the window srvscope's
# JSON gives (start_ns, end_ns): windows a second apart differed by up to 4 points, as
# srvscope loads its program while perf samples and perf writes its file while srvscope
# still samples, and a target that loses a CPU spends its time elsewhere.

# perf_start FILE: perf records into FILE until perf_folded; returns once it samples.
perf_start() {
	timeout -k 5 120 perf record -q -a -k mono -e cpu-clock -c 190011 -B -N -o "$1" \
		-- sleep 100 >/dev/null 2>&1 &
	_perf=$!
	_pids="$_pids $_perf"
	for _ in $(seq 100); do
		[ -s "$1" ] && break
		sleep 0.05
	done
	sleep 0.5
}

# perf_folded FILE PIDS JSON OUT: stops perf, and writes its samples of PIDS (comma
# separated) within the window of srvscope's JSON report as one-frame folded stacks
# ("function count", kernel functions suffixed _[k]) to OUT. perf's samples are picked by
# pid with the pid in the sort key: perf 6.1's 'report --pid --sort sym' filters the
# merged entries by one pid each, and loses the functions other processes ran too.
perf_folded() {
	local window
	kill -INT "$_perf" 2>/dev/null
	wait "$_perf"
	window=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%d.%09d,%d.%09d" % (d["start_ns"] // 10**9, d["start_ns"] % 10**9,
                           d["end_ns"] // 10**9, d["end_ns"] % 10**9))' "$3")
	diag "perf's samples cut to srvscope's window: $window"
	timeout -k 5 60 perf report -i "$1" --no-children --pid="$2" --time "$window" \
		-F sample,pid,sym --stdio -g none 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ && NF >= 4 { c[$4 (($3 == "[k]") ? "_[k]" : "")] += $1 }
			END { for (f in c) print f, c[f] }' >"$4"
}
