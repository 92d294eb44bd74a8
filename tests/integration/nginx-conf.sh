# nginx_conf DIR PORT WORKERS HTTP SERVER: writes DIR/nginx.conf for an nginx in the
# foreground with WORKERS worker processes, its pid, logs (DIR/logs) and temporary files
# (DIR/tmp) in DIR, and one server on 127.0.0.1:PORT; HTTP: more directives for http {},
# SERVER: the server block's text after its address (" reuseport; root ...;" or
# "; location ..."). Sourced by tests/integration/lib.sh and bench/lib.sh (bash).
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
