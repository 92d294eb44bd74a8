# Shared by the t72-clone*.t scripts (sourced after lib.sh): start a clone of a model and
# stop it, checking that it stops cleanly.
CH="$TOP/tests/integration/clone_check.py"
MODELS="$TOP/tests/fixtures/models"

# start_clone MODEL: starts srvscope clone MODEL on a free port, its scratch files under
# $TMP/scratch; sets CLONE_PID and CLONE_PORT once it listens (up to 10 s).
start_clone() {
	mkdir -p "$TMP/scratch"
	TMPDIR="$TMP/scratch" "$SRVSCOPE" clone "$1" --port 0 2>"$TMP/clone.err" &
	CLONE_PID=$!
	_pids="$_pids $CLONE_PID"
	local i
	for i in $(seq 200); do
		CLONE_PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/clone.err")
		[ -n "$CLONE_PORT" ] && return 0
		kill -0 "$CLONE_PID" 2>/dev/null || break
		sleep 0.05
	done
	diag "the clone of $1 did not start:"; sed 's/^/#   /' "$TMP/clone.err"; return 1
}

# tree_pids PID: PID and its descendants.
tree_pids() {
	local p=$1 c
	echo "$p"
	for c in $(children_of "$p"); do tree_pids "$c"; done
}
# alive PID: PID runs (a zombie is dead: on some machines PID 1 reaps no orphan)
alive() { [ -r /proc/"$1"/stat ] && [ "$(awk '{print $3}' /proc/"$1"/stat 2>/dev/null)" != Z ]; }
children_of() { pgrep -P "$1" | sort -n; } # pgrep: a process gone meanwhile is no error

# stop_clone SIGNAL WHAT: signals the clone, checks it exits 0 within 5 s with no process
# of its tree left and its scratch directory gone.
stop_clone() {
	local pids rc i left=""
	pids=$(tree_pids "$CLONE_PID")
	kill -"$1" "$CLONE_PID"
	for i in $(seq 100); do kill -0 "$CLONE_PID" 2>/dev/null || break; sleep 0.05; done
	wait "$CLONE_PID"; rc=$?
	is "$rc" 0 "$2: the clone exits 0 on SIG$1"
	sleep 0.2
	for i in $pids; do alive "$i" && left="$left $i"; done
	is "${left:-none}" none "$2: none of its $(echo $pids | wc -w) processes is left"
	is "$(ls -A "$TMP/scratch")" "" "$2: its scratch directory is removed"
}
