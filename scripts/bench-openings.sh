#!/usr/bin/env bash
# The two-move openings benchmark (issue 17): every White first move and every Black reply
# (20 x 20 = 400 lines), each proven on its own from the position after the two moves with
# `antitb prove --max-nodes N` on one thread (so node counts and answers are reproducible), and
# a count of those decided (win, loss or not a win) within the budget.
#
# Resumable: each finished line is appended to OUT as one tab-separated row
# (moves, answer, nodes, seconds) and lines already in OUT are not run again, so a killed run
# goes on where it stopped and the work can be spread over sessions.
#
# Usage: scripts/bench-openings.sh [MAX_NODES] [OUT] [JOBS] [TABLES_DIR...]
#   MAX_NODES  node budget per line (default 10000000)
#   OUT        results file (default openings-MAX_NODES.tsv)
#   JOBS       lines run at once (default 1; each on one thread)
#   TABLES_DIR the <=4-piece tables (default: tables)
#   Environment: ANTITB=path uses that binary instead of building this checkout; NICE=n runs
#   the searches at that niceness (default 0).
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-10000000}
out=${2:-openings-$nodes.tsv}
jobs=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
tables=("$@")
[ ${#tables[@]} -eq 0 ] && tables=(tables)
targs=()
for t in "${tables[@]}"; do
  [ -d "$t" ] || { echo "no table directory $t" >&2; exit 2; }
  targs+=(--tables "$t")
done
if [ -z "${ANTITB:-}" ]; then
  cargo build --release --quiet
  bin=$PWD/target/release/antitb
else
  bin=$(realpath "$ANTITB")
fi
touch "$out"
# The 400 lines, from the binary's own move generator: White's moves from perft, Black's replies
# as `prove --all` lists them (one node each, no search to speak of).
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
start="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"
for w in $("$bin" perft "$start" 1 --divide | awk '/^[a-h][1-8][a-h][1-8]/ {print $1}'); do
  for b in $("$bin" prove --all --moves "$w" --max-nodes 1 -q | awk '/^  [a-h][1-8][a-h][1-8]/ {print $1}'); do
    echo "$w $b"
  done
done > "$lines"
total=$(wc -l < "$lines")
[ "$total" -eq 400 ] || { echo "expected 400 two-move lines, got $total" >&2; exit 1; }

one() {
  local line=$1
  if grep -q "^$line	" "$out"; then
    return 0
  fi
  local res
  res=$(nice -n "${NICE:-0}" "$bin" prove --moves "$line" "${targs[@]}" --max-nodes "$nodes" -q)
  local answer n t
  answer=$(head -n 1 <<< "$res")
  n=$(awk '/^nodes / {print $2}' <<< "$res")
  t=$(awk '/^time / {print $2}' <<< "$res")
  printf '%s\t%s\t%s\t%s\n' "$line" "$answer" "$n" "$t" >> "$out"
}
export -f one
export out nodes bin NICE
export targs_str="${targs[*]}"
# shellcheck disable=SC2016
xargs -a "$lines" -d '\n' -P "$jobs" -I{} bash -c 'targs=($targs_str); one "$@"' _ {}

awk -F'\t' -v total="$total" '
  { seen++; a[$2]++ }
  END {
    decided = seen - a["unknown"]
    printf "lines %d of %d done; decided %d (win %d, loss %d, not a win %d), unknown %d\n",
      seen, total, decided, a["win"], a["loss"], a["not a win"], a["unknown"]
  }' "$out"
