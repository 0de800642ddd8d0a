#!/usr/bin/env bash
# Generation benchmark (issue: retrograde generator). Wall time and peak RSS for
#   (a) all 2- and 3-piece tables, (b) all 4-piece tables, (c) three 5-piece tables with the
#   5-piece tables they need: KRNvBN, KQRBvN, KNPvKB,
# each against the reference generator's anchor measured on this kind of machine
# (../shared/reference/syzygy/README.md: 2 threads, ply-accurate DTZ).
# Usage: scripts/bench-gen.sh [WORKDIR] [--skip-5]   (WORKDIR default: /tmp/antitb-bench)
# Tables of earlier steps are kept in WORKDIR, so each step measures only its own tables.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/antitb-bench}
skip5=${2:-}
cargo build --release --quiet
bin=$PWD/target/release/antitb
mkdir -p "$work"
tables=$work/tables
log=$work/bench.log
: > "$log"

measure() { # name anchor_seconds command...
  local name=$1 anchor=$2; shift 2
  local t; t=$(mktemp)
  /usr/bin/time -v "$@" --quiet 2> "$t" >/dev/null || { cat "$t"; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$t")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$t")
  rm -f "$t"
  printf '%-34s wall %8.1f s   peak RSS %6s MB   reference %7s s   ratio %s\n' \
    "$name" "$wall" "$rss" "$anchor" "$(awk -v w="$wall" -v a="$anchor" 'BEGIN{ if (a>0) printf "%.2f", w/a; else print "-" }')" | tee -a "$log"
}

rm -rf "$tables"
measure "(a) all 2- and 3-piece tables" 24.5 "$bin" generate --max-pieces 3 --tables "$tables"
measure "(b) all 4-piece tables" 2900 "$bin" generate --max-pieces 4 --tables "$tables"
if [ "$skip5" != "--skip-5" ]; then
  measure "(c) KRNvBN" 56 "$bin" generate KRNvBN --tables "$tables"
  measure "(c) KQRBvN" 61 "$bin" generate KQRBvN --tables "$tables"
  measure "(c) KNPvKB + 5 five-piece deps" 563 "$bin" generate KNPvKB --tables "$tables"
fi
echo "bytes on disk: $(du -sb "$tables" | cut -f1) (reference <=4 pieces: 108697984 = 92381664 WDL + 16316320 DTZ)" | tee -a "$log"
