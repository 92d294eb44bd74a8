#!/bin/sh
# Installs the Debian packages srvscope needs to build, test and benchmark.
# Idempotent: only what is missing is installed; nothing happens when all is there.
set -e
PKGS="make gcc g++ clang llvm libbpf-dev bpftool libunwind-dev libelf-dev libdw-dev
libjansson-dev libncurses-dev zlib1g-dev libdeflate-dev libzstd-dev liblzma-dev libbz2-dev libiberty-dev
libprotobuf-c-dev protobuf-c-compiler elfutils binutils libc6-dbg perl iproute2 tmux gdb
linux-perf bpftrace memcached libmemcached-tools redis-server python3 nodejs
nginx-light apache2 apache2-utils postgresql postgresql-contrib haproxy"
# srvscope model's thread-per-connection server (and mariadb-slap to drive it)
PKGS="$PKGS mariadb-server mariadb-client"
# srvscope report: the HTML report is opened in headless Chromium by t78.
PKGS="$PKGS chromium"
# srvscope clone's tests count the clone's syscalls with strace (t72)
PKGS="$PKGS strace"
# cpu and topology: hwloc (the library, its static archive and lstopo), iperf3 (t74)
PKGS="$PKGS libhwloc-dev hwloc-nox iperf3"
# pprof and serve: the HTTP library, go tool pprof and a real Prometheus for the tests.
PKGS="$PKGS libmicrohttpd-dev golang-go prometheus curl"
PKGS="$PKGS jq wrk" # t70-load reads srvscope load's JSON; bench/load.sh's HTTP peer
# libFuzzer's runtime (make check links the fuzz targets) ships apart from clang, under
# clang's major version: libclang-rt-14-dev on Debian 12.
clang_major=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
PKGS="$PKGS libclang-rt-${clang_major:-14}-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
# Debian ships / as 0755. A root made from a 0700 directory (a chroot unpacked into
# mktemp -d) lets no other user reach anything, and the servers the tests start drop to
# their own users (postgres, www-data): give / the mode Debian gives it.
if [ "$(id -u)" = 0 ] && [ "$(stat -c %a /)" != 755 ] && [ "$(stat -c %U /)" = root ]; then
	echo "srvscope: / is mode $(stat -c %a /), so no user but root can reach anything; setting it to 755 as Debian ships it"
	chmod 755 /
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "srvscope: missing packages:$missing; run 'sudo scripts/install-deps.sh'" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
