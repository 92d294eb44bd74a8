#!/bin/bash
# The recorder's stack cache never gives a stack of another call path. rec_converge sleeps
# in turn through two or three callers of one helper whose paths are the same (ip, sp,
# syscall, arguments, stack words, registers) from the syscall up to 1, 8 or 40 KiB above
# it; each caller's share of the off-CPU time in 'flame --kind=off' (default options) must
# be within 2 points of what the fixture measured (its blocked time, run-queue waits left
# out: a loaded host wakes it late). At 40 KiB the callers lie beyond the
# default 32 KiB copy: the stacks end at middle() with a [truncated] mark, and none names a
# caller. --call-graph=fp (3 callers, 8 KiB) splits the same way.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

for run in 2:1 2:8 2:40 3:1 3:8 3:40 3:8:fp; do
	IFS=: read -r callers kib fp <<<"$run"
	name="$callers callers, $kib KiB${fp:+, --call-graph=fp}"
	f="$TMP/c$callers-$kib${fp:+-fp}.trace"
	"$SRVSCOPE" record ${fp:+--call-graph=fp} -o "$f" -- "$FIXTURES/rec_converge" \
		$callers $kib 1.2 >"$TMP/out" 2>"$TMP/err"
	ok $? "$name: record"
	# With frame pointers, libc's frames are lost, and nap() with them: middle()
	# calls the syscall.
	"$SRVSCOPE" flame "$f" --kind=off --comm converge | grep ';middle;' >"$TMP/off.folded"
	read -r fa fb fc <<<"$(awk '/^slept_us / {print $2, $3, $4}' "$TMP/out")"
	read -r sa sb sc all cut <<<"$(awk '
		/;caller_a;/ { a += $NF } /;caller_b;/ { b += $NF } /;caller_c;/ { c += $NF }
		{ n += $NF } /;\[truncated\];middle;/ { t += $NF }
		END { print a + 0, b + 0, c + 0, n + 0, t + 0 }' "$TMP/off.folded")"
	diag "$name: srvscope a $sa b $sb c $sc of $all us ($cut truncated); fixture a $fa b $fb c $fc"
	check "$name: the fixture's blocked time is accounted, within 10 % ($all us)" \
		awk -v s="$all" -v f="$((fa + fb + fc))" 'BEGIN { exit !(f > 300000 && s > 0.9 * f && s < 1.1 * f) }'
	if [ $kib = 40 ]; then
		check "$name: every stack is cut at middle() and marked [truncated]" \
			[ "$cut" = "$all" ]
		check "$name: no stack names a caller" [ $((sa + sb + sc)) = 0 ]
		continue
	fi
	check "$name: every stack names its caller" [ $((sa + sb + sc)) = "$all" ]
	for x in a b c; do
		[ $callers = 2 ] && [ $x = c ] && continue
		eval "s=\$s$x f=\$f$x"
		check "$name: caller_$x's share within 2 points of the fixture's" \
			awk -v s="$s" -v S="$((sa + sb + sc))" -v f="$f" -v F="$((fa + fb + fc))" \
			'BEGIN { d = 100 * s / S - 100 * f / F; exit !(S && F && d <= 2 && d >= -2) }'
	done
done

done_testing
