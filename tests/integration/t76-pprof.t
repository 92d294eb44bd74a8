#!/bin/bash
# --format=pprof: go tool pprof (Debian's golang-go) reads every profile srvscope writes,
# and the profile says what the folded output says: the same stacks with the same totals
# (stacks of a target held still by SIGSTOP, so two runs see the same; flame off, wake and
# on from one trace). Labels thread and tid are the target's threads; the target's
# mapping carries its ELF build-id; top's piped refreshes add up in one profile.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
command -v go >/dev/null || skip_all "go (golang-go) is needed for go tool pprof"
PF="python3 $TOP/tests/integration/pprof_folded.py"

start_fixture "$FIXTURES/stackfix-c-pie" || { ok 1 "fixture starts"; done_testing; }
threads=$(ls /proc/"$FPID"/task | wc -l)

# Held still, the target's stacks are the same in two runs: compare folded with pprof.
kill -STOP "$FPID"
# Every thread in the group stop first (under load some take a while to get there).
for _ in $(seq 500); do
	[ -z "$(states_of "$FPID" | tr -d T)" ] && break
	sleep 0.01
done
is "$(states_of "$FPID" | tr -d T)" "" "every thread of the fixture is stopped"
for mode in ptrace nostop; do
	"$SRVSCOPE" stacks -p "$FPID" --mode=$mode -k -n 2 -i 10 --format=folded 2>"$TMP/err" |
		sort >"$TMP/$mode.folded"
	"$SRVSCOPE" stacks -p "$FPID" --mode=$mode -k -n 2 -i 10 --format=pprof >"$TMP/$mode.pb.gz" 2>>"$TMP/err"
	is "$?" 0 "stacks --mode=$mode --format=pprof exits 0"
	$PF "$TMP/$mode.pb.gz" >"$TMP/$mode.pp" 2>>"$TMP/err"
	ok $? "$mode: go tool pprof -raw reads the stacks profile"
	check "$mode: pprof's stacks and totals equal the folded output's" \
		cmp -s "$TMP/$mode.folded" "$TMP/$mode.pp"
	cmp -s "$TMP/$mode.folded" "$TMP/$mode.pp" || diff "$TMP/$mode.folded" "$TMP/$mode.pp" | head -10 | sed 's/^/#   /'
	[ -s "$TMP/$mode.folded" ] || sed 's/^/#   /' "$TMP/err"
done
kill -CONT "$FPID"
like "$(grep -c . "$TMP/nostop.pp")" '^[5-9]$' "the profile has the fixture's distinct stacks"

$PF "$TMP/nostop.pb.gz" --info >"$TMP/info"
like "$(grep '^types' "$TMP/info")" '^types samples/count$' "stacks: sample type samples/count"
# Every thread of the target is a sample labelled with its tid and name, 2 thread-samples.
want=$(for t in /proc/"$FPID"/task/*; do echo "2 thread=$(cat "$t/comm") tid=${t##*/}"; done | sort)
got=$(sed -n 's/^sample //p' "$TMP/info" | sort)
is "$got" "$want" "one sample per thread, labels thread and tid, 2 thread-samples each"
bid=$(readelf -n "$FIXTURES/stackfix-c-pie" | sed -n 's/.*Build ID: //p')
like "$(grep '^mapping' "$TMP/info" | head -1)" "^mapping $FIXTURES/stackfix-c-pie $bid\$" \
	"the first mapping is the target's executable with its build-id ($bid)"
libc=$(awk '$6 ~ /libc\.so/ {print $6; exit}' /proc/"$FPID"/maps)
lbid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
like "$(grep '^mapping' "$TMP/info")" "mapping $libc $lbid" "libc's mapping has its build-id"
like "$(grep '^mapping' "$TMP/info")" 'mapping \[kernel.kallsyms\]' "kernel frames in [kernel.kallsyms]"

# top piped: the refreshes add up into one profile written at the end.
"$SRVSCOPE" top -p "$FPID" -n 3 -i 50 --format=pprof >"$TMP/top.pb.gz" 2>"$TMP/err"
is "$?" 0 "top --format=pprof exits 0"
total=$($PF "$TMP/top.pb.gz" | awk '{ s += $NF } END { print s }')
is "$total" "$((3 * threads))" "top: 3 refreshes of $threads threads"

# flame: one trace, three kinds, each pprof against the folded output.
"$SRVSCOPE" record -p "$FPID" -d 1 --on-cpu=199 -o "$TMP/t.trace" >/dev/null 2>"$TMP/err"
ok $? "record the fixture 1 s with on-CPU samples"
for kind in off wake on; do
	"$SRVSCOPE" flame "$TMP/t.trace" --kind=$kind | sort >"$TMP/$kind.folded"
	"$SRVSCOPE" flame "$TMP/t.trace" --kind=$kind --format=pprof >"$TMP/$kind.pb.gz"
	is "$?" 0 "flame --kind=$kind --format=pprof exits 0"
	# off and wake: off_cpu/nanoseconds, the folded microseconds times 1000.
	div=1000
	[ $kind = on ] && div=1
	$PF "$TMP/$kind.pb.gz" --divide $div >"$TMP/$kind.pp" 2>"$TMP/err"
	ok $? "$kind: go tool pprof -raw reads it"
	[ -s "$TMP/$kind.folded" ]
	ok $? "$kind: the folded output has stacks"
	check "$kind: pprof's stacks and totals equal the folded output's" \
		cmp -s "$TMP/$kind.folded" "$TMP/$kind.pp"
	cmp -s "$TMP/$kind.folded" "$TMP/$kind.pp" || diff "$TMP/$kind.folded" "$TMP/$kind.pp" | head -10 | sed 's/^/#   /'
done
like "$($PF "$TMP/off.pb.gz" --info | grep '^types')" '^types off_cpu/nanoseconds$' "off: off_cpu/nanoseconds"
like "$(grep -c '^fix-spin;.*;spin_inner' "$TMP/on.pp")" '^[1-9]' "on: the spinning thread's samples"
like "$($PF "$TMP/on.pb.gz" --info | grep '^types')" '^types samples/count cpu/nanoseconds$' \
	"on: samples/count and cpu/nanoseconds"
# At 199 Hz a sample is 1e9/199 ns: cpu/nanoseconds is the count times that.
$PF "$TMP/on.pb.gz" --type cpu/nanoseconds --divide $((1000000000 / 199)) >"$TMP/on.ns"
check "on: cpu/nanoseconds is samples times the period" cmp -s "$TMP/on.ns" "$TMP/on.pp"
done_testing
