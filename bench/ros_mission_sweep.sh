#!/usr/bin/env bash
# The strategic mission over ROS 2 (issue 50): `modbot launch launch/strategic_mission.launch.yaml`
# — sim_node free-running, planner_node, mission_node over DDS — once per layout seed, inside
# a private loopback-only network namespace (DDS discovery never leaves the machine), and
# the success rate at the end:
#
#   bench/ros_mission_sweep.sh OUTDIR "latency_ms=0..20,loss=0.01,seed=7" 1 2 3 4 5 6 7 8 9 10
#
# An empty fault string runs without injected faults. Per seed OUTDIR/sN.log holds the
# launch's log and OUTDIR/summary.txt one line: reached or failed, the mission's last line
# (distance and heading by the ground truth, or the failing phase with its reason) and the
# wall time. Builds the debug binaries first (about two minutes of wall per seed on this
# 2-core machine with the catalog parsed once). Not part of CI.
set -euo pipefail
out=$1; faults=$2; shift 2
cd "$(dirname "$0")/.."
mkdir -p "$out"
: > "$out/summary.txt"
cargo build -q -p modbot -p modbot_ros --bins
netns() {
  if [ "$(id -u)" -eq 0 ]; then flag=-n; else flag=-rn; fi
  unshare "$flag" -- sh -c 'ip link set lo up && ip link set lo multicast on && (ip route add 224.0.0.0/4 dev lo 2>/dev/null || true) && exec "$0" "$@"' "$@"
}
reached=0; n=0
for s in "$@"; do
  n=$((n + 1))
  start=$(date +%s)
  if netns target/debug/modbot launch launch/strategic_mission.launch.yaml \
      "layout_seed:=$s" "faults:=$faults" linger_s:=0.5 > "$out/s$s.log" 2>&1; then
    verdict=reached; reached=$((reached + 1))
  else
    verdict=failed
  fi
  last=$(grep -oE "mission \`[a-z_]+\`: .*" "$out/s$s.log" | tail -1 || true)
  echo "seed $s: $verdict in $(( $(date +%s) - start )) s wall; $last" | tee -a "$out/summary.txt"
done
echo "reached $reached of $n (faults: ${faults:-none})" | tee -a "$out/summary.txt"
