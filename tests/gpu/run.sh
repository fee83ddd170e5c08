#!/bin/bash
# tests/gpu/run.sh [TILEASM] — every example through `tileasm run --backend=cuda`
# (GPU result checked against the interpreter) at several shapes, ragged ones
# included, for the sm_80 and sm_90a code paths.  Prints one table row per
# run and exits non-zero if any run fails.  Full logs go to $LOG (default
# gpu-run.log).  Meant for the H200 device machine; needs libcuda.so.1.
T=${1:-build-ptx/tools/tileasm}
LOG=${LOG:-gpu-run.log}
EX=${EXAMPLES:-examples}
: >"$LOG"
# example | shape arguments (--arg NAME=V, space separated) | extra options
CASES=(
  "vector_add|N=1024|"
  "vector_add|N=1000|"
  "vector_add|N=100003|"
  "reduce_sum|M=8 N=256|"
  "reduce_sum|M=13 N=1000|"
  "reduce_sum|M=100 N=777|"
  "softmax|M=4 N=256|"
  "softmax|M=7 N=300|"
  "softmax|M=33 N=1000|"
  "rmsnorm|M=4 N=256|"
  "rmsnorm|M=9 N=600|"
  "layernorm|M=4 N=256|"
  "layernorm|M=10 N=513|"
  "gemm|M=128 N=128 K=32|"
  "gemm|M=256 N=256 K=128|"
  "gemm|M=200 N=130 K=70|"
  "gemm|M=1 N=7 K=5|"
  "gemm_bf16_tn|M=128 N=128 K=32|"
  "gemm_bf16_tn|M=256 N=384 K=96|"
  "gemm_bf16_tn|M=131 N=77 K=45|"
  "flash_attention_fwd|S=64 causal=0 scale=0.125|"
  "flash_attention_fwd|S=200 causal=0 scale=0.125|"
  "flash_attention_fwd|S=256 causal=1 scale=0.125|"
  "flash_attention_fwd|S=100 causal=1 scale=0.125|"
)
fails=0
total=0
printf '%-20s %-7s %-28s %-10s %-10s %s\n' example target shape max_abs max_rel result
for tgt in ${TARGETS:-sm_80 sm_90a}; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r ex shape extra <<<"$c"
    args=()
    for a in $shape; do args+=(--arg "$a"); done
    out=$(timeout 300 "$T" run "$EX/$ex.tile" --backend=cuda --target="$tgt" "${args[@]}" $extra 2>&1)
    rc=$?
    { echo "=== $ex $tgt $shape (rc $rc)"; echo "$out"; } >>"$LOG"
    maxabs=$(echo "$out" | sed -n 's/.*max abs err \([^ ]*\).*/\1/p' | sort -g | tail -1)
    maxrel=$(echo "$out" | sed -n 's/.*max rel err \([^ ]*\).*/\1/p' | sort -g | tail -1)
    res=FAIL
    if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then res=PASS; fi
    [ $res = PASS ] || fails=$((fails + 1))
    total=$((total + 1))
    printf '%-20s %-7s %-28s %-10s %-10s %s\n' "$ex" "$tgt" "$shape" "${maxabs:--}" "${maxrel:--}" "$res"
  done
done
echo "$((total - fails))/$total passed"
[ $fails -eq 0 ]
