#!/bin/sh
# Runs every fuzz target for FUZZ_SECONDS seconds on its corpus (tests/fuzz/corpus/NAME,
# copied so the tree is not written to). Exits non-zero on the first crash.
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=${FUZZ_SECONDS:-10}
for bin in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	corpus=$(mktemp -d)
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$corpus/"
	echo "fuzzing $name for ${secs}s"
	"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -artifact_prefix="$BUILD/fuzz/$name-" \
		"$corpus" 2>"$BUILD/fuzz/$name.log" || {
		tail -30 "$BUILD/fuzz/$name.log"
		rm -rf "$corpus"
		exit 1
	}
	rm -rf "$corpus"
done
