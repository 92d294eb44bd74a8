# Servers on loopback, for the tests and the benchmarks alike: sourced (bash) by
# tests/integration/lib.sh and bench/lib.sh; functions only.

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT PID: up to 10 s for a listener on PORT while PID lives.
wait_port() {
	local i
	for i in $(seq 200); do
		kill -0 "$2" 2>/dev/null || return 1
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# nginx_conf DIR PORT WORKERS HTTP SERVER: writes DIR/nginx.conf for an nginx in the
# foreground with WORKERS worker processes, its pid, logs (DIR/logs) and temporary files
# (DIR/tmp) in DIR, and one server on 127.0.0.1:PORT; HTTP: more directives for http {},
# SERVER: the server block's text after its address (" reuseport; root ...;" or
# "; location ...").
nginx_conf() {
	mkdir -p "$1/logs" "$1/tmp"
	cat >"$1/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes $3;
pid $1/nginx.pid;
error_log $1/logs/error.log;
events { worker_connections 1024; }
http {
	$4
	client_body_temp_path $1/tmp;
	proxy_temp_path $1/tmp;
	fastcgi_temp_path $1/tmp;
	uwsgi_temp_path $1/tmp;
	scgi_temp_path $1/tmp;
	server { listen 127.0.0.1:$2$5 }
}
CONF
}
