#!/bin/sh
# tools/bench/scale_callgrind.sh — the deterministic side of bench_scale: instructions executed per emitted
# instruction for one compile (parse + verify + compile; bench_scale --one switches callgrind's collection on
# around it only).
#
#   tools/bench/scale_callgrind.sh [BENCH_SCALE] TARGET SHAPE:N...
#   e.g. tools/bench/scale_callgrind.sh gfx942 loops:256 loops:1024 nest:64
#
# Prints per case: emitted instructions, instructions executed (callgrind Ir), and Ir per emitted instruction.
set -eu
exe=build/tools/bench/bench_scale
case ${1:-} in */*) exe=$1; shift ;; esac
target=${1:?usage: scale_callgrind.sh [BENCH_SCALE] TARGET SHAPE:N...}
shift
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 1; }
printf '%-10s %7s %9s %14s %10s\n' shape n insns Ir Ir/insn
for c in "$@"; do
	shape=${c%%:*} n=${c#*:}
	out=$(valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/dev/null \
		"$exe" --one "$shape" "$n" "$target" 2>&1) || { echo "$c: failed: $(echo "$out" | tail -1)"; continue; }
	insns=$(echo "$out" | sed -n 's/.* insns \([0-9]*\) .*/\1/p')
	ir=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	printf '%-10s %7s %9s %14s %10.0f\n' "$shape" "$n" "$insns" "$ir" "$(awk "BEGIN { print $ir / $insns }")"
done
