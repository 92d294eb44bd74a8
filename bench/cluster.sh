#!/bin/bash
# Thread clustering's time on 1000 threads (50 and 1000 distinct trees) next to a naive
# all-pairs O(n^3) baseline in the same run, with the ratio; fails if the two disagree or
# if srvscope's takes over 2 s. Usage: bench/cluster.sh [THREADS [ROLES]]
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$TOP/src" -o "$OUT/cluster" "$TOP/bench/cluster.c" \
	"$TOP"/src/model/cluster*.c "$TOP"/src/model/stacktree.c "$TOP"/src/util/util.c || exit 1
"$OUT/cluster" "$@"
