#!/usr/bin/env bash
# The store of solved positions (issue 17, prove --solved): does a search stopped part way
# resume from what it saved? For a line, a run from nothing (the anchor, one thread, so node
# counts repeat), then for each stop point a run stopped there (--max-nodes) that saves its
# store, and a second run that loads it and proves the line; and a last run after a finished
# search's store (the position proven again). Prints nodes, and the totals as ratios to the run
# from nothing. df-pn is chaotic: the run from nothing itself moves by 2x as the table size
# changes, so read several stop points (and lines), not one.
#
# Usage: scripts/bench-solved-store.sh [TABLES_DIR] [LINE] [MEMORY_MB] [STOP...]
#   TABLES_DIR  tables for the leaves (default: tables; "none" for none)
#   LINE        moves from the start position (default: "e2e3 b7b5 f1b5 h7h6")
#   MEMORY_MB   transposition table (default: 256)
#   STOP        node counts to stop the first run at (default: 2000000 5000000 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:-tables}
line=${2:-"e2e3 b7b5 f1b5 h7h6"}
mem=${3:-256}
[ $# -gt 3 ] && shift 3 || set --
stops=("$@")
[ ${#stops[@]} -gt 0 ] || stops=(2000000 5000000 10000000)
cargo build --release --quiet
bin=target/release/antitb
tb=()
if [ "$tables" != none ]; then
  [ -d "$tables" ] || { echo "no table directory $tables" >&2; exit 2; }
  tb=(--tables "$tables")
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() { "$bin" prove --moves "$line" "${tb[@]}" --memory "$mem" -q "$@"; }
nodes() { sed -n 's/^nodes \([0-9]*\) expanded.*/\1/p'; }
answer() { head -1; }
out=$(run)
fresh=$(nodes <<<"$out")
echo "line: $line; ${mem} MB; tables: $tables"
echo "from nothing: $(answer <<<"$out"), $fresh nodes"
for stop in "${stops[@]}"; do
  rm -f "$scratch/s.atbs"
  run --max-nodes "$stop" --solved "$scratch/s.atbs" > /dev/null
  out=$(run --solved "$scratch/s.atbs")
  n=$(nodes <<<"$out")
  loaded=$(sed -n 's/^solved positions: \([0-9]*\) loaded.*/\1/p' <<<"$out")
  awk -v s="$stop" -v n="$n" -v f="$fresh" -v l="$loaded" -v a="$(answer <<<"$out")" \
    'BEGIN { printf "stopped at %d, %d positions saved; resumed: %s, %d nodes; total %d = %.2fx\n", s, l, a, n, s + n, (s + n) / f }'
done
rm -f "$scratch/s.atbs"
run --solved "$scratch/s.atbs" > /dev/null
out=$(run --solved "$scratch/s.atbs")
n=$(nodes <<<"$out")
awk -v n="$n" -v f="$fresh" -v a="$(answer <<<"$out")" \
  'BEGIN { printf "again after a finished search: %s, %d nodes = %.4fx\n", a, n, n / f }'
