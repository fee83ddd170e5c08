#!/bin/sh
# tests/golden/check.sh [--update] — golden tests: each tests/golden/NAME.tile sits next to its expected
# SIMT IR (NAME.gfx942.simt, --dump-simt), PTX (NAME.sm_80.ptx) and AMD listing (NAME.gfx942.s, --dump-isa).
# Compiles each with the CLI (with --verify) and diffs; --update rewrites the expected files instead.
# Any codegen change shows here as a diff: regenerate with `tools/dev golden` and review it.
set -eu
root=${TILEASM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exe=${TILEASM:-$root/build/tools/tileasm}
update=0
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for tile in "$root"/tests/golden/*.tile; do
	name=${tile%.tile}
	for kind in gfx942.simt sm_80.ptx gfx942.s; do
		target=${kind%.*}
		case $kind in
		*.simt) flag=--dump-simt ;;
		*) flag=--dump-isa ;;
		esac
		got=$tmp/out
		if ! "$exe" compile "$tile" --target="$target" $flag --verify >"$got" 2>"$tmp/err"; then
			echo "golden: $(basename "$tile") --target=$target $flag failed:"; cat "$tmp/err"
			fail=1
			continue
		fi
		n=$((n + 1))
		if [ $update = 1 ]; then
			cp "$got" "$name.$kind"
		elif ! cmp -s "$got" "$name.$kind"; then
			echo "golden: $(basename "$name.$kind") differs (expected -, got +):"
			diff -u "$name.$kind" "$got" | head -30 || true
			fail=1
		fi
	done
done
if [ $fail = 1 ]; then
	echo "golden: outputs changed. If the change is intended, run 'tools/dev golden' and review the diff."
	exit 1
fi
[ $update = 1 ] && echo "golden: wrote $n expected files" || echo "golden: $n outputs as expected"
