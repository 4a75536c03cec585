#!/usr/bin/env bash
# The strategic mission through the robot interface's ROS 2 binding (packages/modbot_ros/
# tests/bus_mission.rs) over many seeds and a fault specification, one seed after another:
#
#   bench/bus_mission_sweep.sh OUTDIR "latency_ms=0..20,loss=0.01,seed=7" 1 2 3 ...
#
# Builds the test once, runs it per seed (MODBOT_SEED, MODBOT_FAULTS) and writes one line
# per seed to OUTDIR/summary.txt: ok or FAILED, the wall and simulated time, the failure.
# About two minutes per seed on one core (debug build). Not part of CI.
set -euo pipefail
out=$1; faults=$2; shift 2
cd "$(dirname "$0")/.."
mkdir -p "$out"
bin=$(CARGO_INCREMENTAL=0 cargo test -p modbot_ros --test bus_mission --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*bus_mission[^"]*\)".*/\1/p' | tail -1)
for s in "$@"; do
  MODBOT_SEED=$s MODBOT_FAULTS="$faults" "$bin" from_seed_8 --nocapture > "$out/s$s.log" 2>&1 || true
  verdict=$(grep -E '^test .* (ok|FAILED)$' "$out/s$s.log" | awk '{print $NF}')
  echo "seed $s: $verdict $(grep -E '^wall' "$out/s$s.log") $(grep -oE 'failed: .*' "$out/s$s.log" | head -1)" \
    | tee -a "$out/summary.txt"
done
