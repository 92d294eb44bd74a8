#!/bin/bash
# Usage errors, the same way in every command: one line naming the option and pointing to
# --help, exit status 2, nothing done; a number out of range says the range; --help
# exits 0 (docs/srvscope.1, EXIT STATUS).
. "$(dirname "$0")/lib.sh"

usage_error() { # DESCRIPTION REGEX ARGS...
	local desc=$1 re=$2; shift 2
	timeout 10 "$SRVSCOPE" "$@" >"$TMP/out" 2>"$TMP/err"
	is "$?" 2 "$desc: exit status 2"
	is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "$desc: one line"
	like "$(cat "$TMP/err")" "$re" "$desc: says what"
	is "$(wc -c <"$TMP/out" | tr -d ' ')" 0 "$desc: nothing on stdout"
}

for cmd in stacks top record blocking sched flame timeline; do
	usage_error "$cmd --frobnicate" \
		"^srvscope: $cmd: unknown option '--frobnicate' \(see 'srvscope $cmd --help'\)$" \
		$cmd --frobnicate=1
	usage_error "$cmd -Z" "^srvscope: $cmd: unknown option '-Z' \(see 'srvscope $cmd --help'\)$" \
		$cmd -Z
	timeout 10 "$SRVSCOPE" $cmd --help >"$TMP/out" 2>"$TMP/err"
	is "$?" 0 "$cmd --help: exit status 0"
	like "$(head -1 "$TMP/out")" "^usage: srvscope $cmd" "$cmd --help: the usage on stdout"
done
usage_error "stacks -p without its value" "^srvscope: stacks: option '-p' needs a value" stacks -p
usage_error "top --interval without its value" "^srvscope: top: option '--interval' needs a value" \
	top -p 1 --interval
usage_error "flame --kind without its value" "^srvscope: flame: option '--kind' needs a value" \
	flame x.trace --kind
usage_error "-n beyond a long" "invalid value '99999999999999999999' for -n: must be between 1 and 1000000" \
	stacks -p 1 -n 99999999999999999999
usage_error "-n out of range" "invalid value '99999999999' for -n: must be between 1 and 1000000" \
	stacks -p 1 -n 99999999999
usage_error "-i not a whole number" "invalid value '1e3' for -i: expected a whole number from 0 to" \
	stacks -p 1 -i 1e3
usage_error "-d beyond a double" "invalid value '1e999' for -d: must be between" \
	record -a -d 1e999
usage_error "record -o -" "^srvscope: record: -o -: a trace is written to a file" record -a -o -
usage_error "record without a target" "^srvscope: record: needs exactly one target.*--help" record
usage_error "sched without a file" "^srvscope: sched: needs one trace file.*--help" sched
usage_error "unknown command" "unknown command 'frobnicate'" frobnicate

done_testing
