#!/bin/sh
# Runs every test: the C unit tests and the TAP integration scripts, under prove.
# prove prints "Result: PASS" (or FAIL) as the last line, which CI reads.
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export SRVSCOPE="${SRVSCOPE:-$PWD/$BUILD/srvscope}"
export FIXTURES="$PWD/$BUILD/fixtures"
exec prove --exec '' --timer --failures $(ls "$BUILD"/tests/unit/test_* 2>/dev/null) tests/integration/*.t
