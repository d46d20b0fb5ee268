#!/usr/bin/env bash
# `make test` on fresh clones of this repository's HEAD, in a row, beside two CPU hogs (issue 40's check that the
# README's test command passes on a busy machine). Prints each run's setup and test time and its exit status.
# Usage: benchmarks/suite_beside_hogs.sh [RUNS]  (default 3; about 25 min a run on 2 cores)
set -u
runs=${1:-3}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
for i in $(seq "$runs"); do git clone -q "$repo" "$work/clone$i"; done  # all of one commit
yes > /dev/null & hog1=$!
yes > /dev/null & hog2=$!
trap 'kill "$hog1" "$hog2" 2>/dev/null' EXIT
export HF_HUB_OFFLINE=1
failed=0
for i in $(seq "$runs"); do
  cd "$work/clone$i" || exit 1
  start=$(date +%s); make setup browser postgres > "$work/setup$i.log" 2>&1; tested=$(date +%s)
  make test > "$work/test$i.log" 2>&1; rc=$?; end=$(date +%s)
  echo "run $i ($(git log -1 --format=%h)): setup $((tested - start)) s, make test $((end - tested)) s, exit $rc," \
       "load $(cut -d' ' -f1-3 /proc/loadavg); log $work/test$i.log"
  [ "$rc" = 0 ] || failed=1
done
echo "target: every run passes (make test itself: 10 min on 2 quiet cores)"
exit "$failed"
