#!/bin/bash
# Files as root beside other users: record never writes through a symlink another user
# planted nor replaces an existing file without --force, traces are 0600; FIFOs, devices
# and directories are refused at once wherever a path is read (a trace, a path its maps
# name, a JIT's perf map), never opened in a way that blocks.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

# A sticky, world-writable directory like /tmp, where 'nobody' plants files.
pub="$TMP/pub"
mkdir "$pub" && chmod 1777 "$pub"
echo secret >"$TMP/victim"
chmod 644 "$TMP/victim"
chmod 755 "$TMP"
# Planted by root and given to nobody (chown -h): the same files as nobody would make, also
# on a machine where nobody cannot reach $TMP (a fresh machine's / can be 0700).
plant() { # plant DIR: a symlink to the victim and a file of nobody's in DIR
	ln -s "$TMP/victim" "$1/link.trace" && chown -h nobody:nogroup "$1/link.trace" &&
		echo theirs >"$1/file.trace" && chown nobody:nogroup "$1/file.trace"
}
plant "$pub"

# The same in nobody's own directory, where fs.protected_symlinks and fs.protected_regular
# (which only guard sticky, world-writable directories) do not apply.
own="$TMP/own"
mkdir "$own" && chown nobody "$own"
plant "$own"

for dir in "$pub" "$own"; do
	for name in link file; do
		f="$dir/$name.trace"
		timeout 30 "$SRVSCOPE" record -d 0.2 -o "$f" -- true >/dev/null 2>"$TMP/err"
		rc=$?
		is "$rc" 1 "${dir##*/}/$name planted by nobody: record exits 1"
		is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "${dir##*/}/$name: one line"
		like "$(cat "$TMP/err")" "already exists.*--force" "${dir##*/}/$name: says it exists and what to do"
	done
	is "$(cat "$TMP/victim")" secret "${dir##*/}: the symlink's target is untouched"
	is "$(readlink "$dir/link.trace")" "$TMP/victim" "${dir##*/}: the symlink is untouched"
	is "$(cat "$dir/file.trace")" theirs "${dir##*/}: the existing file is untouched"
	is "$(stat -c %U "$dir/file.trace")" nobody "${dir##*/}: and still nobody's"
done

f="$pub/new.trace"
timeout 30 "$SRVSCOPE" record -d 0.2 -o "$f" -- true >/dev/null 2>"$TMP/err"
is "$?" 0 "a new file is recorded"
is "$(stat -c %a "$f")" 600 "the trace is mode 0600 (kallsyms, maps)"

timeout 30 "$SRVSCOPE" record --force -d 0.2 -o "$pub/link.trace" -- true >/dev/null 2>"$TMP/err"
is "$?" 0 "--force over the planted symlink"
is "$(cat "$TMP/victim")" secret "its target is still untouched"
check "the symlink was replaced by a trace" [ -f "$pub/link.trace" -a ! -L "$pub/link.trace" ]
is "$(stat -c %a:%U "$pub/link.trace")" 600:root "0600, root's"
"$SRVSCOPE" sched "$pub/link.trace" >/dev/null 2>&1
is "$?" 0 "and it is a readable trace"
is "$(ls -A "$pub" | grep -c '^\.')" 0 "no temporary file left in the directory"

# --force replaces a regular file or a symlink to one, nothing else: not a device (a copy
# of /dev/null's node), a FIFO, a directory, a symlink to a device, nor a link into /proc
# (/dev/stdout's kind): each left as it was, one line, exit 1.
mknod "$TMP/null" c 1 3 && mkfifo "$TMP/out.fifo" && mkdir "$TMP/adir" &&
	ln -s "$TMP/null" "$TMP/tonull" && ln -s /proc/self/fd/1 "$TMP/stdout" ||
	{ echo "# cannot make the special files" >&2; exit 1; }
for f in null out.fifo adir tonull stdout; do
	before=$(stat -c %F "$TMP/$f")
	timeout 30 "$SRVSCOPE" record --force -d 0.2 -o "$TMP/$f" -- true >/dev/null 2>"$TMP/err"
	is "$?" 1 "--force over $f ($before): exit 1"
	like "$(cat "$TMP/err")" "^srvscope: cannot create '$TMP/$f': not a regular file" \
		"... one line that says why"
	is "$(stat -c %F "$TMP/$f")" "$before" "... and $f is still $before"
done
is "$(readlink "$TMP/stdout")" /proc/self/fd/1 "the link into /proc is untouched"

# Reports on non-regular files: one line at once, exit 1.
mkfifo "$TMP/some.fifo"
for arg in "blocking $TMP/some.fifo" "sched $TMP" "flame --kind=off /dev/null" \
	"timeline $TMP/some.fifo"; do
	start=$(date +%s%N)
	timeout 10 "$SRVSCOPE" $arg >/dev/null 2>"$TMP/err"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	is "$rc" 1 "$arg: exit 1 (not a hang)"
	check "$arg: at once ($ms ms)" [ "$ms" -lt 2000 ]
	is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "$arg: one line"
	like "$(cat "$TMP/err")" "is a (FIFO|directory|character device), not a trace file" \
		"$arg: says what it is"
done

# Other inputs named on the command line (folded stacks, a model's config, serve's token): a FIFO is
# refused at once; standard input and a shell's <(...) are read as streams.
for arg in "cpu --folded $TMP/some.fifo" "model -p $$ --load true --config $TMP/some.fifo" \
	"serve -p $$ --listen 127.0.0.1:0 --token-file $TMP/some.fifo"; do
	start=$(date +%s%N)
	timeout 10 "$SRVSCOPE" $arg >/dev/null 2>"$TMP/err"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	check "$arg: refused, not a hang ($rc)" [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
	check "$arg: at once ($ms ms)" [ "$ms" -lt 2000 ]
	like "$(cat "$TMP/err")" "not a regular file" "$arg: says why"
done
like "$(printf 'main;work 3\n' | "$SRVSCOPE" cpu --folded - 2>&1)" "3 samples" "cpu --folded -: standard input read"
like "$("$SRVSCOPE" cpu --folded <(printf 'main;work 4\n') 2>&1)" "4 samples" "cpu --folded <(...): a /dev/fd stream read"

# A trace whose maps name a FIFO: the binary it recorded was replaced by one.
cp "$FIXTURES/rec_sleeper" "$TMP/sleeper"
timeout 30 "$SRVSCOPE" record -o "$TMP/s.trace" -- "$TMP/sleeper" 0.5 >/dev/null 2>&1
is "$?" 0 "recorded a copy of rec_sleeper"
rm "$TMP/sleeper" && mkfifo "$TMP/sleeper"
for arg in "blocking --stacks" "flame --kind=off" "flame --kind=off --format=svg"; do
	timeout 20 "$SRVSCOPE" $arg "$TMP/s.trace" >/dev/null 2>"$TMP/err"
	rc=$?
	is "$rc" 0 "$arg with its binary now a FIFO: done, not hung"
done

# A JIT perf map that is a FIFO (the target owns /tmp/perf-PID.map).
start_fixture "$FIXTURES/stackfix-c-pie" || ok 1 "fixture starts"
mkfifo "/tmp/perf-$FPID.map"
timeout 20 "$SRVSCOPE" stacks -p "$FPID" --mode=ptrace >/dev/null 2>"$TMP/err"
is "$?" 0 "stacks with /tmp/perf-PID.map a FIFO: done, not hung"
rm -f "/tmp/perf-$FPID.map"

done_testing
