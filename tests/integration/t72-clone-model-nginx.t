#!/bin/bash
# The issue's structural check (clone_models_match, t72-clone-lib.sh) for nginx with 2
# workers: `srvscope model` of its clone gives nginx's model.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/t72-clone-lib.sh"
need_root
need_btf
need_servers nginx

start_nginx 2 || ok 1 "nginx starts"
[ $_failed -eq 0 ] && clone_models_match nginx "$NGINX_PID" "http://127.0.0.1:$NGINX_PORT/"
done_testing
