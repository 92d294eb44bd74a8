#!/bin/bash
# The recorder's programs stay far from the verifier's limit: each program's instructions
# verified (the kernel's count, in the fdinfo of the recorder's program descriptors) under
# 250 thousand of the million the kernel allows. The waking program once reached 794
# thousand (a way's index tracked through eight unrolled steps): 1.75 s of every start, and
# one change away from a program the kernel refuses.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

sleep 30 &
target=$!
_pids="$_pids $target"
"$SRVSCOPE" record -p "$target" -d 4 --syscalls --on-cpu --ipi --no-progress \
	-o "$TMP/v.trace" 2>"$TMP/rec.err" &
rec=$!
# prog_verified: "INSNS PROG_ID" for each program the recorder holds open
prog_verified() {
	local f
	for f in /proc/"$rec"/fdinfo/*; do
		grep -q '^prog_type' "$f" 2>/dev/null || continue
		awk '/^verified_insns/ {n = $2} /^prog_id/ {id = $2} END {print n + 0, id}' "$f"
	done
}
# links: the programs are attached once all are loaded
links() { grep -l '^link_type' /proc/"$rec"/fdinfo/* 2>/dev/null | wc -l; }
for _ in $(seq 100); do
	[ "$(links)" -ge 10 ] && break
	sleep 0.1
done
prog_verified >"$TMP/v.list" 2>/dev/null
n=$(wc -l <"$TMP/v.list")
check "the recorder holds its programs ($n)" [ "$n" -ge 10 ]
sort -rn "$TMP/v.list" | head -3 | while read -r insns id; do
	diag "program $id: $insns instructions verified"
done
most=$(sort -rn "$TMP/v.list" | head -1 | cut -d' ' -f1)
check "the kernel reports the instructions verified (fdinfo verified_insns)" [ "${most:-0}" -gt 0 ]
check "every program under 250000 instructions verified (the most: ${most:-none})" \
	[ "${most:-0}" -gt 0 -a "${most:-0}" -lt 250000 ]
wait "$rec"
ok $? "the recording ends well"
done_testing
