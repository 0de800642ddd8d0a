#!/usr/bin/env bash
# Estimates against measurements (issue #14, "estimates that hold"): builds the given tables
# (default: KKKKKvP and NNNvNNN, six pieces, with everything they need) with
# `generate --report`, then lists for every table built its measured CPU time and peak RSS
# beside the estimates `plan` gives, and the ratios. The tables of WITH_TABLES (e.g. an
# existing <=4-piece set) are read, not rebuilt.
# Usage: scripts/bench-estimates.sh [WORKDIR] [MATERIAL...]
#   env: METRICS (default wdl,dtz), WITH_TABLES (default none), THREADS (default all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/antitb-estimates}
shift || true
materials=("$@")
[ ${#materials[@]} -gt 0 ] || materials=(KKKKKvP NNNvNNN)
metrics=${METRICS:-wdl,dtz}
cargo build --release --quiet
bin=$PWD/target/release/antitb
mkdir -p "$work/tables"
report=$work/report.jsonl
: > "$report"
with=()
[ -n "${WITH_TABLES:-}" ] && with=(--with-tables "$WITH_TABLES")
threads=()
[ -n "${THREADS:-}" ] && threads=(--threads "$THREADS")
"$bin" generate "${materials[@]}" --metrics "$metrics" --tables "$work/tables" "${with[@]}" \
  "${threads[@]}" --report "$report" --quiet
python3 - "$report" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
M = 2**20
print(f"{'table':10} {'slots/side':>12} {'cpu s':>8} {'est s':>8} {'ratio':>6} "
      f"{'peak MiB':>9} {'est MiB':>8} {'ratio':>6} {'B/slot/side':>11}")
within = timed = 0
for r in rows:
    if r["cpu_seconds"] is None or r["peak_rss_bytes"] is None:
        continue
    m = r["peak_rss_bytes"] / r["estimated_memory_bytes"]
    # Tables estimated under a second are too short to time.
    if r["estimated_cpu_seconds"] >= 1:
        c = r["cpu_seconds"] / r["estimated_cpu_seconds"]
        timed += 1
        within += abs(c - 1) <= 0.25
        ratio = f"{c:6.2f}"
    else:
        ratio = f"{'-':>6}"
    print(f"{r['material']:10} {r['slots_per_side']:12} {r['cpu_seconds']:8.1f} "
          f"{r['estimated_cpu_seconds']:8.1f} {ratio} {r['peak_rss_bytes']/M:9.0f} "
          f"{r['estimated_memory_bytes']/M:8.0f} {m:6.2f} "
          f"{r['peak_rss_bytes']/(2*r['slots_per_side']):11.2f}")
print(f"{len(rows)} tables built; CPU estimate within 25 % on {within} of the {timed} "
      "estimated at 1 s or more")
# Where the peak lies: each phase's CPU time and peak beside the estimate's parts (the
# solver's and the writer's, each with the sources read and the program's base).
print()
print(f"{'table':10} {'phase':10} {'cpu s':>8} {'peak MiB':>9} {'est MiB':>8}")
for r in rows:
    if not r.get("phases"):
        continue
    base = r["estimated_memory_bytes"] - max(r["estimated_solver_bytes"],
        r["estimated_writer_bytes"]) - r["estimated_sources_bytes"]
    for p in r["phases"]:
        part = r["estimated_solver_bytes" if p["step"] == "solve" else "estimated_writer_bytes"]
        est = part + r["estimated_sources_bytes"] + base
        peak = p["peak_rss_bytes"]
        print(f"{r['material']:10} {p['metric'] + ' ' + p['step']:10} "
              f"{p['cpu_seconds'] or 0:8.1f} {(peak or 0)/M:9.0f} {est/M:8.0f}")
PY
