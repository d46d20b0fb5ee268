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
set -euo pipefail
OUT=${OUT:-evidence}
mkdir -p "$OUT"
DB="$OUT/gpu.duckdb"
JB="${JOULEBENCH:-.venv/bin/joulebench}"
case "${1:-}" in
  bert)
    "$JB" run --workload bert-large-squad --mode infer --precision fp16 --batch-size 8 --db "$DB" \
      --out "$OUT/bert-large-squad-fp16-b8.json" 2>&1 | tee "$OUT/bert-large-squad-fp16-b8.log" ;;
  llm-1b|llm-8b)
    "$JB" run --workload "$1" --precision bf16 --batch-size 1,8,32 --seq-len 512 --max-new-tokens 128 \
      --repeats 3 --db "$DB" --out "$OUT/$1-bf16-generation.json" 2>&1 | tee "$OUT/$1-bf16-generation.log" ;;
  fidelity)
    .venv/bin/python benchmarks/generation_fidelity.py --device cuda --workload llm-1b --precision bf16 \
      --batch-size 8 --seq-len 512 --max-new-tokens 128 --steps 5 --rounds 7 2>&1 | tee "$OUT/fidelity-llm-1b.txt" ;;
  *)
    echo "usage: $0 bert|llm-1b|llm-8b|fidelity" >&2
    exit 2 ;;
esac
