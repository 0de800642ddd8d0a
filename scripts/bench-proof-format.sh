#!/usr/bin/env bash
# Proof formats (issue 17): text against binary on the same proofs in the same run. For each text
# proof: the bytes per node and write time of both writers (examples/proof_format_bench.rs), then
# the check time and peak RSS of both checkers (`antitb check-proof`, under /usr/bin/time -v),
# the text checker being the anchor (ratios binary/text). The binary files are converted by
# `check-proof --write-binary` into a scratch directory.
#
# Usage: scripts/bench-proof-format.sh [TABLES_DIR] [PROOF_FILE...]
#   TABLES_DIR   the tables the proofs' table leaves need (default: tables)
#   PROOF_FILE   text or binary proofs (default: proofs/e3/*.proofb); a binary one is first
#                written as text (`check-proof --write-text`) into the scratch directory, and
#                that text is the anchor
#   Environment: NEW_BIN=path uses that antitb instead of building this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:-tables}
[ $# -gt 0 ] && shift
[ -d "$tables" ] || { echo "no table directory $tables" >&2; exit 2; }
if [ $# -gt 0 ]; then files=("$@"); else files=(proofs/e3/*.proofb); fi
cargo build --release --quiet --example proof_format_bench
if [ -z "${NEW_BIN:-}" ]; then
  cargo build --release --quiet
  bin=$PWD/target/release/antitb
else
  bin=$(realpath "$NEW_BIN")
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Binary proofs (the library's) as text first: the text is the anchor.
texts=()
for f in "${files[@]}"; do
  if [ "$(head -c 8 "$f")" = ATBPROOF ]; then
    t=$scratch/$(basename "$f" .proofb).proof
    "$bin" check-proof "$f" --tables "$tables" --write-text "$t" >/dev/null
    texts+=("$t")
  else
    texts+=("$f")
  fi
done
files=("${texts[@]}")

echo "== writers (best of 3-5 rounds, to memory)"
target/release/examples/proof_format_bench "${files[@]}"

# One check: "<seconds reported by check-proof> <peak RSS kB> <figures>".
check() {
  /usr/bin/time -v "$bin" check-proof "$1" --tables "$tables" >"$scratch/out" 2>"$scratch/time" \
    || { cat "$scratch/out" "$scratch/time" >&2; exit 1; }
  local secs rss figures
  secs=$(sed -n 's/.*checked in \([0-9.]*\) s.*/\1/p' "$scratch/out")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time")
  figures=$(sed -n 's/^nodes \([0-9]*\) .*depth \([0-9]*\) plies.*/\1 nodes, depth \2/p' "$scratch/out")
  echo "$secs $rss $figures"
}

echo "== checkers (check time as check-proof reports it, peak RSS of the process)"
printf '%-24s %9s %9s %9s %9s %9s %8s %8s %8s\n' file nodes "text s" "bin s" "s ratio" \
  "text MB" "bin MB" "RSS rat" "kept"
for f in "${files[@]}"; do
  b=$scratch/$(basename "$f" .proof).proofb
  "$bin" check-proof "$f" --tables "$tables" --write-binary "$b" >/dev/null
  read -r ts tr tfig <<<"$(check "$f")"
  read -r bs br bfig <<<"$(check "$b")"
  [ "$tfig" = "$bfig" ] || { echo "$f: the checkers differ: '$tfig' against '$bfig'" >&2; exit 1; }
  # The most shared positions the binary checker kept at once.
  kept=$(sed -n 's/.*at most \([0-9]*\) shared positions.*/\1/p' "$scratch/out")
  awk -v f="$(basename "$f")" -v n="${tfig%% *}" -v ts="$ts" -v bs="$bs" -v tr="$tr" -v br="$br" \
    -v k="$kept" 'BEGIN { printf "%-24s %9d %9.3f %9.3f %9.2f %9.1f %9.1f %8.2f %8d\n", f, n, ts,
             bs, (ts > 0 ? bs / ts : 0), tr / 1024, br / 1024, br / tr, k }'
done
