#!/usr/bin/env bash
# Issue 19's evidence on a lent NVIDIA GPU (see the device tool's README): the default BERT run, then the 1B
# and 8B generation shapes in bf16 at batch 1, 8 and 32 with 3 repeats each, then the decode fidelity
# benchmark. It never changes the power limit, clocks or persistence mode. Each step is its own command so
# each fits the device tool's 10-minute limit:
#
#   bash benchmarks/gpu_generation_evidence.sh bert      # about 2 minutes
#   bash benchmarks/gpu_generation_evidence.sh llm-1b    # about 6 minutes
#   bash benchmarks/gpu_generation_evidence.sh llm-8b    # about 8 minutes
#   bash benchmarks/gpu_generation_evidence.sh fidelity  # about 3 minutes
#
# Result files and logs go to $OUT (default: evidence/), with the database they were imported into.
# Every wait is time-limited: first `nvidia-smi -L` must list a GPU within GPU_CHECK_S (default 30 s; on a
# machine without one the script stops there), then the step within LIMIT_S (default 570 s, under the device
# tool's 10 minutes). One that runs out is stopped (SIGTERM, SIGKILL 30 s later, its children too) and the
# script prints `FAILED: <what> after N s` on stderr and exits 1.
set -euo pipefail
OUT=${OUT:-evidence}
JB="${JOULEBENCH:-.venv/bin/joulebench}"
PY="${PYTHON:-.venv/bin/python}"
NVIDIA_SMI="${NVIDIA_SMI:-nvidia-smi}"
GPU_CHECK_S=${GPU_CHECK_S:-30}
LIMIT_S=${LIMIT_S:-570}

fail() { echo "FAILED: $*" >&2; exit 1; }

# step LOG WHAT COMMAND...: COMMAND within LIMIT_S, its output shown and kept in LOG
step() {
  local log=$1 what=$2 rc=0
  shift 2
  timeout --kill-after=30 "$LIMIT_S" "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "$what after $LIMIT_S s"; fi
  return "$rc"
}

case "${1:-}" in
  bert|llm-1b|llm-8b|fidelity) ;;
  *)
    echo "usage: $0 bert|llm-1b|llm-8b|fidelity" >&2
    exit 2 ;;
esac
rc=0
timeout --kill-after=5 "$GPU_CHECK_S" "$NVIDIA_SMI" -L >/dev/null 2>&1 || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "\`$NVIDIA_SMI -L\` to list the GPU after $GPU_CHECK_S s"; fi
[ "$rc" -eq 0 ] || fail "no NVIDIA GPU: \`$NVIDIA_SMI -L\` exited with code $rc (this script is for a lent GPU machine)"
mkdir -p "$OUT"
DB="$OUT/gpu.duckdb"
case "$1" in
  bert)
    step "$OUT/bert-large-squad-fp16-b8.log" "the BERT run" \
      "$JB" run --workload bert-large-squad --mode infer --precision fp16 --batch-size 8 --db "$DB" \
      --out "$OUT/bert-large-squad-fp16-b8.json" ;;
  llm-1b|llm-8b)
    step "$OUT/$1-bf16-generation.log" "the $1 generation runs" \
      "$JB" run --workload "$1" --precision bf16 --batch-size 1,8,32 --seq-len 512 --max-new-tokens 128 \
      --repeats 3 --db "$DB" --out "$OUT/$1-bf16-generation.json" ;;
  fidelity)
    step "$OUT/fidelity-llm-1b.txt" "the decode fidelity benchmark" \
      "$PY" benchmarks/generation_fidelity.py --device cuda --workload llm-1b --precision bf16 \
      --batch-size 8 --seq-len 512 --max-new-tokens 128 --steps 5 --rounds 7 ;;
esac
