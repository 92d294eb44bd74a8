# Real servers from Debian for the integration tests (sourced after lib.sh, bash): each
# runs as the test's own instance, its config and data in $TMP, on a loopback port picked
# free, and is stopped when the script exits (stop_servers runs before lib.sh's cleanup).
# start_X sets X_PID (the master) and X_PORT, and returns 1 after a diagnostic when the
# server does not come up within its bound.
_srv_stops=""
stop_servers() {
	local s
	for s in $_srv_stops; do stop_pid "${s%:*}" "${s#*:}"; done
	_srv_stops=""
}
trap 'stop_servers; cleanup' EXIT

need_servers() { # need_servers BINARY...: skip the whole script when one is missing
	local b
	for b in "$@"; do
		command -v "$b" >/dev/null 2>&1 || [ -x "$b" ] ||
			skip_all "$b is not installed (scripts/install-deps.sh installs it)"
	done
}

# run_server NAME PORT COMMAND...: starts COMMAND (its output in $TMP/server-NAME.out), to be
# stopped when the script exits, and waits for its listener on PORT; sets SERVER_PID.
# Returns 1 after a diagnostic when it does not come up.
run_server() {
	local name=$1 port=$2
	shift 2
	"$@" >"$TMP/server-$name.out" 2>&1 &
	SERVER_PID=$!
	_srv_stops="$_srv_stops $SERVER_PID:TERM"
	wait_port "$port" "$SERVER_PID" && return 0
	diag "$name did not start:"; sed 's/^/#   /' "$TMP/server-$name.out"; return 1
}

# stop_pid PID [SIGNAL]: SIGNAL (TERM), then up to 5 s for it to go, then SIGKILL.
stop_pid() {
	local i
	kill -"${2:-TERM}" "$1" 2>/dev/null || return 0
	for i in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	kill -KILL "$1" 2>/dev/null
}

# children_of PID: the pids whose parent is PID.
children_of() { awk -v p="$1" '$4 == p {print $1}' /proc/[0-9]*/stat 2>/dev/null | sort -n; }

start_nginx() { # start_nginx WORKERS
	local d="$TMP/nginx"
	NGINX_PORT=$(free_port)
	nginx_conf "$d" "$NGINX_PORT" "$1" "access_log off;" '; location / { return 200 "hello\n"; }'
	run_server nginx "$NGINX_PORT" nginx -p "$d" -c "$d/nginx.conf" -e "$d/logs/error.log" ||
		{ NGINX_PID=$SERVER_PID; sed 's/^/#   /' "$d/logs/error.log"; return 1; }
	NGINX_PID=$SERVER_PID
	# The master listens before it forks its workers: under load the port answers while
	# some are still to come, and a test that takes the tree then finds fewer.
	local i
	for i in $(seq 100); do
		[ "$(children_of "$NGINX_PID" | wc -w)" -ge "$1" ] && break
		sleep 0.05
	done
}

start_apache2() { # start_apache2 CHILDREN: mpm_event, 8 threads a child
	local d="$TMP/apache2" m=/usr/lib/apache2/modules
	mkdir -p "$d/htdocs"
	echo hello >"$d/htdocs/index.html"
	APACHE2_PORT=$(free_port)
	cat >"$d/apache2.conf" <<CONF
ServerRoot "$d"
ServerName localhost
Listen 127.0.0.1:$APACHE2_PORT
PidFile "$d/apache2.pid"
DefaultRuntimeDir "$d"
Mutex file:$d default
ErrorLog "$d/error.log"
LogLevel warn
User www-data
Group www-data
LoadModule mpm_event_module $m/mod_mpm_event.so
LoadModule authz_core_module $m/mod_authz_core.so
StartServers $1
ServerLimit $1
MinSpareThreads 1
MaxSpareThreads $(($1 * 8))
ThreadsPerChild 8
MaxRequestWorkers $(($1 * 8))
MaxConnectionsPerChild 0
DocumentRoot "$d/htdocs"
<Directory "$d/htdocs">
	Require all granted
</Directory>
CONF
	apache2 -d "$d" -f "$d/apache2.conf" -DFOREGROUND >"$d/out" 2>&1 &
	APACHE2_PID=$!
	_srv_stops="$_srv_stops $APACHE2_PID:TERM"
	wait_port "$APACHE2_PORT" "$APACHE2_PID" && return 0
	diag "apache2 did not start:"; sed 's/^/#   /' "$d/out" "$d/error.log" 2>/dev/null; return 1
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

start_postgres() { # as the postgres user, its data directory in $TMP
	local d="$TMP/pg" bin
	bin=$(pg_bin)
	[ -n "$bin" ] || { diag "no postgresql server"; return 1; }
	chmod 755 "$TMP"
	mkdir -p "$d" && chown postgres: "$d"
	POSTGRES_PORT=$(free_port)
	if ! setpriv --reuid=postgres --regid=postgres --init-groups \
		"$bin/initdb" -D "$d/data" -A trust -U postgres --no-sync >"$d/initdb.out" 2>&1; then
		diag "initdb failed:"; sed 's/^/#   /' "$d/initdb.out"; return 1
	fi
	setpriv --reuid=postgres --regid=postgres --init-groups \
		"$bin/postgres" -D "$d/data" -p "$POSTGRES_PORT" -k "$d" -c listen_addresses=127.0.0.1 \
		-c fsync=off -c shared_buffers=16MB >"$d/out" 2>&1 &
	POSTGRES_PID=$!
	_srv_stops="$_srv_stops $POSTGRES_PID:INT" # a fast shutdown
	wait_port "$POSTGRES_PORT" "$POSTGRES_PID" && return 0
	diag "postgres did not start:"; sed 's/^/#   /' "$d/out"; return 1
}

start_haproxy() { # start_haproxy BACKEND_PORT: an HTTP proxy in front of 127.0.0.1:BACKEND_PORT
	local d="$TMP/haproxy"
	mkdir -p "$d"
	HAPROXY_PORT=$(free_port)
	cat >"$d/haproxy.cfg" <<CONF
global
	maxconn 1000
	pidfile $d/haproxy.pid
defaults
	mode http
	timeout connect 2s
	timeout client 10s
	timeout server 10s
frontend front
	bind 127.0.0.1:$HAPROXY_PORT
	default_backend back
backend back
	server one 127.0.0.1:$1
CONF
	haproxy -db -f "$d/haproxy.cfg" >"$d/out" 2>&1 &
	HAPROXY_PID=$!
	_srv_stops="$_srv_stops $HAPROXY_PID:TERM"
	wait_port "$HAPROXY_PORT" "$HAPROXY_PID" && return 0
	diag "haproxy did not start:"; sed 's/^/#   /' "$d/out"; return 1
}

start_memcached() { # start_memcached THREADS
	MEMCACHED_PORT=$(free_port)
	run_server memcached "$MEMCACHED_PORT" memcached -u root -l 127.0.0.1 -p "$MEMCACHED_PORT" \
		-U 0 -t "$1"
	local rc=$?
	MEMCACHED_PID=$SERVER_PID
	return $rc
}
