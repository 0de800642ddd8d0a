#!/usr/bin/env bash
# Size benchmark (issue 4): bytes on disk of all <=4-piece antitb tables (WDL and DTZ files
# separately, DTW files reported apart, not in the ratio) against the reference Syzygy files (.gtbw = WDL,
# .gtbz = DTZ) of ../shared/reference/syzygy, with the ratios antitb / Syzygy. Goal: <= 1.5x.
# Bytes are file lengths (apparent size; `du` block rounding would favour neither side much).
# Usage: scripts/bench-size.sh [ANTITB_DIR] [SYZYGY_DIR]
#   (defaults: /tmp/tb4 and ../shared/reference/syzygy; ANTITB_DIR from
#    `antitb generate --max-pieces 4 --tables DIR`)
set -euo pipefail
cd "$(dirname "$0")/.."
ours=${1:-/tmp/tb4}
ref=${2:-../shared/reference/syzygy}
[ -d "$ours" ] || { echo "bench-size: no antitb table directory $ours" >&2; exit 1; }
if [ ! -d "$ref" ]; then
  echo "skipped: reference Syzygy tables not found at $ref"
  exit 0
fi

# sum DIR EXT: "files bytes" over the files NAME.EXT whose material NAME has at most 4 pieces.
sum() {
  find "$1" -maxdepth 1 -type f -name "*.$2" -printf '%f %s\n' | awk -v ext=".$2" '
    { name = $1; sub(ext "$", "", name); m = name; gsub("v", "", m)
      if (name ~ /^[KQRBNP]+v[KQRBNP]+$/ && length(m) <= 4) { n++; b += $2 } }
    END { printf "%d %d\n", n, b }'
}

read -r wn wb < <(sum "$ours" wdl)
read -r zn zb < <(sum "$ours" dtz)
read -r rwn rwb < <(sum "$ref" gtbw)
read -r rzn rzb < <(sum "$ref" gtbz)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
row() { printf '%-10s %5s files %13s bytes   %5s files %13s bytes   %6sx\n' "$1" "$2" "$3" "$4" "$5" "$(ratio "$3" "$5")"; }

echo "<=4-piece tables: antitb ($ours) vs Syzygy ($ref)"
printf '%-10s %25s   %25s   %7s\n' "" "antitb" "Syzygy" "ratio"
row "WDL" "$wn" "$wb" "$rwn" "$rwb"
row "DTZ" "$zn" "$zb" "$rzn" "$rzb"
row "WDL+DTZ" "$((wn + zn))" "$((wb + zb))" "$((rwn + rzn))" "$((rwb + rzb))"
if [ "$wn" -ne 714 ] || [ "$zn" -ne 714 ]; then
  echo "warning: expected 714 antitb WDL and DTZ files (all tables up to 4 pieces)" >&2
fi
read -r dn db < <(sum "$ours" dtw)
if [ "$dn" -gt 0 ]; then
  printf '%-10s %5s files %13s bytes   (no Syzygy counterpart; %s of WDL+DTZ)\n' "DTW" "$dn" "$db" \
    "$(awk -v a="$db" -v b="$((wb + zb))" 'BEGIN { printf "+%.0f%%", 100 * a / b }')"
fi
