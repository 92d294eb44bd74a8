# Sourced by the benchmarks that load a real memcached (bash): tool checks and the server.
# The caller sets PORT and kills $MC in its own cleanup.

# bench_need WHO TOOL...: exits with one line when a tool is missing.
bench_need() {
	local who=$1 tool
	shift
	for tool; do
		command -v "$tool" >/dev/null ||
			{ echo "$who: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
	done
}

# start_memcached WHO MEMORY_MB: memcached with 4 threads on ${LISTEN:-127.0.0.1}:$PORT;
# sets MC.
start_memcached() {
	memcached -u root -t 4 -p "$PORT" -U 0 -l "${LISTEN:-127.0.0.1}" -m "$2" &
	MC=$!
	sleep 0.5
	kill -0 "$MC" 2>/dev/null || { echo "$1: memcached did not start" >&2; exit 1; }
}
