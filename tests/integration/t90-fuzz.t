#!/bin/bash
# A short run of every fuzz target (parsers of /proc text, kallsyms, perf maps, trace
# files): each must survive FUZZ_SECONDS (default 8) of libFuzzer without a crash.
. "$(dirname "$0")/lib.sh"
secs=${FUZZ_SECONDS:-8}
for bin in "$TOP/$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	corpus="$TMP/$name"
	mkdir -p "$corpus"
	[ -d "$TOP/tests/fuzz/corpus/$name" ] && cp -r "$TOP/tests/fuzz/corpus/$name/." "$corpus/"
	"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -artifact_prefix="$TMP/$name-" "$corpus" \
		>"$TMP/$name.log" 2>&1
	rc=$?
	ok $rc "$name survives ${secs}s of fuzzing"
	[ $rc -eq 0 ] || tail -20 "$TMP/$name.log" | sed 's/^/#   /'
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$TMP/$name.log")
	check "$name ran inputs (${runs:-0})" [ "${runs:-0}" -gt 100 ]
done
[ "$_n" -gt 0 ] || ok 1 "fuzz targets built (run make fuzz-bins)"
done_testing
