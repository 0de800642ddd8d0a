#!/usr/bin/env bash
# Prover benchmark (issue 17): an anchor binary (e.g. main's build) against this checkout's, on the
# same positions in the same run, one after the other, each under `nice -n 19` and
# `/usr/bin/time -v`. Prints per run: answer, wall and CPU (user+sys) seconds, expanded nodes,
# proof nodes, peak RSS, minor page faults; and per position the ratios new/anchor of CPU and nodes.
# The machine may be shared: CPU seconds and node counts are the figures to compare, wall time
# only on an idle machine.
#
# Usage: scripts/bench-prove.sh ANCHOR_BIN [TABLES_DIR] [-- EXTRA PROVE ARGS...]
#   ANCHOR_BIN  an antitb binary to compare against (e.g. /work/main/target/release/antitb)
#   TABLES_DIR  the <=4-piece tables (default: tables)
#   Environment: NEW_ARGS="--threads 2" adds arguments to the new binary's runs only (space-
#   separated; several variants with '|': NEW_ARGS="--threads 1|--threads 2");
#   POSITIONS="moves|moves|..." replaces the default positions;
#   NEW_BIN=path uses that binary instead of building this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: $0 ANCHOR_BIN [TABLES_DIR] [-- EXTRA PROVE ARGS...]" >&2
  exit 2
fi
anchor=$(realpath "$1")
shift
tables=tables
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  tables=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
extra=("$@")
[ -x "$anchor" ] || { echo "no executable anchor binary $anchor" >&2; exit 2; }
[ -d "$tables" ] || { echo "no table directory $tables" >&2; exit 2; }
if [ -z "${NEW_BIN:-}" ]; then
  nice -n 19 cargo build --release --quiet
  new=$PWD/target/release/antitb
else
  new=$(realpath "$NEW_BIN")
fi
# White to move and wins in each; with <=4-piece tables the first three take about 4e3, 1e5 and
# 3e5 nodes, the last (issue 17's first goal) about 2e7.
IFS='|' read -r -a positions <<< "${POSITIONS:-e2e3 b7b5 f1b5 b8c6|e2e3 b7b5 f1b5 b8a6|e2e3 b7b5 f1b5 a7a6|e2e3 b7b5 f1b5 h7h6}"
IFS='|' read -r -a variants <<< "${NEW_ARGS:-}"
[ ${#variants[@]} -eq 0 ] && variants=("")

# run LABEL BIN ARGS... -> prints one row, sets cpu and nodes of the run
run() {
  local label=$1 bin=$2
  shift 2
  local out tv
  out=$(mktemp)
  tv=$(mktemp)
  if ! nice -n 19 /usr/bin/time -v "$bin" prove --tables "$tables" -q "$@" > "$out" 2> "$tv"; then
    cat "$out" "$tv" >&2
    exit 1
  fi
  local answer wall rss proof faults
  answer=$(head -n 1 "$out")
  nodes=$(awk '/^nodes / {print $2}' "$out")
  proof=$(awk '/^proof / {print $2}' "$out")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tv")
  cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u+s}' "$tv")
  faults=$(awk -F': ' '/Minor \(reclaiming a frame\) page faults/ {print $2}' "$tv")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$tv")
  rm -f "$out" "$tv"
  printf '  %-18s %-4s wall %7.2f s  cpu %7.2f s  nodes %10s  proof %7s  rss %5s MB  faults %7s\n' \
    "$label" "$answer" "$wall" "$cpu" "$nodes" "${proof:--}" "$rss" "$faults"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

echo "anchor $anchor"
echo "new    $new"
echo "tables $tables; extra arguments: ${extra[*]:-none}; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${positions[@]}"; do
  echo "prove --moves \"$p\""
  run anchor "$anchor" --moves "$p" "${extra[@]}"
  a_cpu=$cpu
  a_nodes=$nodes
  for v in "${variants[@]}"; do
    read -r -a vargs <<< "$v"
    run "new ${v}" "$new" --moves "$p" "${extra[@]}" "${vargs[@]}"
    printf '  %-18s cpu %s  nodes %s\n' "new/anchor ${v}" "$(ratio "$cpu" "$a_cpu")" "$(ratio "$nodes" "$a_nodes")"
  done
done
