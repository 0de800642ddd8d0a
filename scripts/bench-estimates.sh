#!/usr/bin/env bash
# Estimates against measurements (issue #14, "estimates that hold"): builds the given tables
# (default: KKKKKvP and NNNvNNN, six pieces, with everything they need) with
# `generate --report`, then lists for every table built its measured CPU time and peak RSS
# beside the estimates `plan` gives, and the ratios. The tables of WITH_TABLES (e.g. an
# existing <=4-piece set) are read, not rebuilt.
# With EXTRAPOLATE=N it then calibrates: per class of tables (pieces, pawns) the measured CPU
# time over the estimated one, the DTW phases over the WDL+DTZ ones, and the share of the solves'
# CPU time spent in their first passes (captures and baselines, before the levels); and it
# extrapolates the whole N-piece set (`plan --max-pieces N`) by those ratios (a class with no
# table built takes its piece count's ratio), in core-hours and in hours on this machine's cores.
# With SEPARATE=1 each MATERIAL is built by its own `generate` (in the order given, each with
# what it needs that is missing), so that no table's peak carries what the one before it left
# in the process: give the tables in dependency order, or their dependencies in WITH_TABLES.
# Usage: scripts/bench-estimates.sh [WORKDIR] [MATERIAL...]
#   env: METRICS (default wdl,dtz), WITH_TABLES (default none), THREADS (default all cores),
#        EXTRAPOLATE (default none), SEPARATE (default none)
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
build() {
  "$bin" generate "$@" --metrics "$metrics" --tables "$work/tables" "${with[@]}" \
    "${threads[@]}" --report "$report" --quiet
}
if [ -n "${SEPARATE:-}" ]; then
  for m in "${materials[@]}"; do build "$m"; done
else
  build "${materials[@]}"
fi
plan=$work/plan.json
: > "$plan"
[ -n "${EXTRAPOLATE:-}" ] && "$bin" plan --max-pieces "$EXTRAPOLATE" --metrics "$metrics" > "$plan"
python3 - "$report" "$plan" "$(nproc)" <<'PY'
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
print(f"{'table':10} {'phase':10} {'cpu s':>8} {'init s':>7} {'peak MiB':>9} {'est MiB':>8}")
for r in rows:
    if not r.get("phases"):
        continue
    base = r["estimated_memory_bytes"] - max(r["estimated_solver_bytes"],
        r["estimated_writer_bytes"]) - r["estimated_sources_bytes"]
    for p in r["phases"]:
        part = r["estimated_solver_bytes" if p["step"] == "solve" else "estimated_writer_bytes"]
        est = part + r["estimated_sources_bytes"] + base
        peak = p["peak_rss_bytes"]
        init = p.get("init_cpu_seconds")
        init = f"{init:7.1f}" if init is not None else f"{'-':>7}"
        print(f"{r['material']:10} {p['metric'] + ' ' + p['step']:10} "
              f"{p['cpu_seconds'] or 0:8.1f} {init} {(peak or 0)/M:9.0f} {est/M:8.0f}")
# Calibration: measured over estimated CPU per class, and what DTW adds to WDL+DTZ.
plan_text = open(sys.argv[2]).read()
if not plan_text.strip():
    sys.exit(0)
plan = json.loads(plan_text)
cores = int(sys.argv[3])
def cls(r):
    return (r["pieces"], r["pawns"])
meas, est, dtw, rest, count, init, solve = {}, {}, {}, {}, {}, {}, {}
for r in rows:
    if r["cpu_seconds"] is None:
        continue
    k = cls(r)
    count[k] = count.get(k, 0) + 1
    meas[k] = meas.get(k, 0) + r["cpu_seconds"]
    est[k] = est.get(k, 0) + r["estimated_cpu_seconds"]
    for p in r.get("phases") or []:
        d = dtw if p["metric"] == "dtw" else rest
        d[k] = d.get(k, 0) + (p["cpu_seconds"] or 0)
        if p["step"] == "solve" and p.get("init_cpu_seconds") is not None:
            init[k] = init.get(k, 0) + p["init_cpu_seconds"]
            solve[k] = solve.get(k, 0) + (p["cpu_seconds"] or 0)
print()
print(f"{'pieces':>6} {'pawns':>5} {'tables':>6} {'cpu s':>9} {'est s':>9} {'ratio':>6} "
      f"{'dtw/(wdl+dtz)':>13} {'init/solve':>10}")
for k in sorted(meas):
    d = f"{dtw[k] / rest[k]:13.2f}" if dtw.get(k) and rest.get(k) else f"{'-':>13}"
    i = f"{init[k] / solve[k]:10.2f}" if solve.get(k) else f"{'-':>10}"
    print(f"{k[0]:6} {k[1]:5} {count[k]:6} {meas[k]:9.1f} {est[k]:9.1f} "
          f"{meas[k] / est[k]:6.2f} {d} {i}")
def ratio(k):
    if k in meas and est[k] > 0:
        return meas[k] / est[k]
    same = [c for c in meas if c[0] == k[0]]
    m, e = sum(meas[c] for c in same), sum(est[c] for c in same)
    return m / e if e > 0 else None
n = max(r["pieces"] for r in plan["tables"])
tot_e = tot_x = 0.0
print()
print(f"the {n}-piece set by plan, extrapolated by class:")
print(f"{'pawns':>5} {'tables':>6} {'est core-h':>10} {'ratio':>6} {'core-h':>8}")
for p in sorted({r["pawns"] for r in plan["tables"] if r["pieces"] == n}):
    tabs = [r for r in plan["tables"] if r["pieces"] == n and r["pawns"] == p]
    e = sum(r["cpu_seconds"] for r in tabs)
    q = ratio((n, p))
    if q is None:
        print(f"{p:5} {len(tabs):6} {e / 3600:10.1f}      - (no {n}-piece table built)")
        continue
    tot_e += e
    tot_x += e * q
    print(f"{p:5} {len(tabs):6} {e / 3600:10.1f} {q:6.2f} {e * q / 3600:8.1f}")
print(f"total: estimated {tot_e / 3600:.1f} core-hours, extrapolated {tot_x / 3600:.1f} "
      f"core-hours = {tot_x / 3600 / cores:.1f} h on this machine's {cores} cores")
PY
