#!/bin/bash
# srvscope stacks on the fixtures with known stacks, all three builds, C and C++,
# in the dynamic and the static binary: every function, every count, demangled C++.
. "$(dirname "$0")/lib.sh"
need_root
MODE=${STACKS_MODE:-ptrace}
if [ -z "${SRVSCOPE_NO_STATIC:-}" ]; then
	like "$(ldd "${SRVSCOPE}-static" 2>&1)" "not a dynamic executable" \
		"the static binary has no runtime dependencies"
fi
n=1
for bin in "$SRVSCOPE" "${SRVSCOPE}-static"; do
	[ -x "$bin" ] || { [ -n "${SRVSCOPE_NO_STATIC:-}" ] && continue; }
	for lang in c cxx; do
		for build in pie debuglink O2; do
			fix="$FIXTURES/stackfix-$lang-$build"
			start_fixture "$fix" || { ok 1 "start $fix"; continue; }
			"$bin" stacks -p "$FPID" --mode="$MODE" --format=json >"$TMP/out.json" 2>"$TMP/err"
			rc=$?
			is "$rc" 0 "$(basename "$bin") stacks $lang-$build exits 0"
			[ -s "$TMP/err" ] && sed 's/^/#   stderr: /' "$TMP/err"
			out=$(python3 "$TOP/tests/integration/expect_stacks.py" \
				"$TOP/tests/fixtures/stackfix-$lang.expect" "$fix" "$TMP/out.json" $((_n + 1)) \
				"$(basename "$bin") $lang-$build: ")
			printf '%s\n' "$out" | grep -v '^# next'
			_n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
			_n=$((_n - 1))
			_failed=$((_failed + $(printf '%s\n' "$out" | grep -c '^not ok')))
			is "$(tracer_of "$FPID")" 0 "$lang-$build: not traced afterwards"
			like "$(states_of "$FPID")" '^[SRD]+$' "$lang-$build: no thread left stopped"
			kill -KILL "$FPID"
			wait "$FPID" 2>/dev/null
		done
	done
done
done_testing
