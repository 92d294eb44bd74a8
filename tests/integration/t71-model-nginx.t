#!/bin/bash
# srvscope model on nginx with 2 worker processes (Debian's nginx-light, loopback): Ditto's
# verdict (accept_dispatch true, network_dispatch false, epoll), pools 2, the workers (the
# master's children, and only they) accept and serve, one cluster apart from the master;
# driven by ab through --load (keep-alive and not), then by the built-in HTTP client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers nginx ab
check_model() { python3 "$(dirname "$0")/expect_model.py" "$@"; }

# nginx: 2 worker processes, each accepts and serves its connections; driven by ab through
# --load, keep-alive and not.
start_nginx 2 || skip_all "nginx did not start"
"$SRVSCOPE" model -p "$NGINX_PID" --conns 8 -o "$TMP/nginx.json" \
	--load "ab -q -c {conns} -n 2000 http://127.0.0.1:$NGINX_PORT/ >/dev/null && ab -k -q -c {conns} -n 2000 http://127.0.0.1:$NGINX_PORT/ >/dev/null" \
	>"$TMP/nginx.out" 2>"$TMP/nginx.err"
ok $? "model nginx (ab)"
sed 's/^/#   /' "$TMP/nginx.out" "$TMP/nginx.err"
check_model "$TMP/nginx.json" "$NGINX_PID" nginx accept_dispatch=true network_dispatch=false \
	network_epoll=true nonblocking=true accept_thread_pool_size=2 network_thread_pool_size=2
ok $? "nginx: Ditto's verdicts, pools 2, the workers one cluster"
"$SRVSCOPE" model -p "$NGINX_PID" --conns 4,8 --client "http://127.0.0.1:$NGINX_PORT/" \
	-o "$TMP/nginx2.json" >"$TMP/nginx2.out" 2>"$TMP/nginx2.err"
ok $? "model nginx (built-in HTTP client, two runs)"
sed 's/^/#   /' "$TMP/nginx2.out" "$TMP/nginx2.err"
check_model "$TMP/nginx2.json" "$NGINX_PID" nginx accept_dispatch=true network_dispatch=false \
	network_epoll=true nonblocking=true accept_thread_pool_size=2 network_thread_pool_size=2 \
	skeleton=1
ok $? "nginx (built-in client): the same verdicts, measured beside its skeleton (worker processes)"

done_testing
