#!/usr/bin/env bash
# Issue 4 on a GPU machine: `numba2cuda verify --device cuda --also-cpu` on every corpus kernel the rules
# translate (two seeds, every size, specialisation and input distribution); JSON per kernel in OUTDIR.
#   bash benchmarks/verify_corpus_gpu.sh OUTDIR
set -uo pipefail
out=${1:-verify-gpu}
mkdir -p "$out"
status=0
for f in kernels/*.py; do
  name=$(basename "$f" .py)
  python3 -m translator.cli translate "$f" -o - >/dev/null 2>&1 || { echo "$name: not translated by the rules (LLM path)"; continue; }
  t0=$(date +%s)
  python3 -m translator.cli verify "$f" --device cuda --also-cpu --seeds 2 --json "$out/$name.json" > "$out/$name.txt" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  echo "$name: exit $rc in $(( $(date +%s) - t0 )) s | $(grep -E '^CPU runtime vs' "$out/$name.txt") | $(tail -1 "$out/$name.txt" | cut -c1-220)"
done
exit $status
