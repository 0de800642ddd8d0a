#!/usr/bin/env bash
# Side by side with de Man's generator (issue 14): for each pawnless table given, build it with
# de Man's `gtbgen` (WDL + ply-accurate DTZ) and with `antitb generate --metrics wdl,dtz`, both on
# THREADS threads, one after the other in the same run, and print wall time, CPU time, peak RSS
# and WDL+DTZ bytes of each with the ratios antitb / de Man.
#
#   scripts/bench-deman.sh GTBGEN TABLES_DIR [THREADS] [TABLE...]
#
# GTBGEN: the `gtbgen` binary of syzygy1/tb, built outside this repository (src/: `make
# gtbgen`; its self-check of long pawnless tables reads loss statistics at `1022 - i` where
# `STAT_MATE - 1 - i` is meant: correct that locally, or KBNvK-like tables fail it).
# TABLES_DIR: antitb's tables up to 4 pieces (`antitb generate --max-pieces 4 --tables DIR`).
# De Man's generator reads its 4-piece tables from ../shared/reference/syzygy (the Syzygy
# antichess files). Default tables: KQRBvN KRNvBN (every capture leads to 4 pieces, so no
# 5-piece table is needed first). THREADS defaults to 2.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/bench-deman.sh GTBGEN TABLES_DIR [THREADS] [TABLE...]" >&2; exit 2; }
gtbgen=$(realpath "$1")
deps=$(realpath "$2")
threads=${3:-2}
shift $(( $# >= 3 ? 3 : 2 ))
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(KQRBvN KRNvBN)
ref=$(realpath ../shared/reference/syzygy 2>/dev/null || true)
if [ -z "$ref" ] || [ ! -d "$ref" ]; then
  echo "skipped: reference Syzygy tables not found at ../shared/reference/syzygy"
  exit 0
fi
[ -x "$gtbgen" ] || { echo "bench-deman: $gtbgen is not an executable" >&2; exit 1; }
[ -d "$deps" ] || { echo "bench-deman: no table directory $deps" >&2; exit 1; }
# A table TABLES_DIR already holds is read from there, not built: nothing to time.
for t in "${tables[@]}"; do
  if compgen -G "$deps/$t.*" > /dev/null; then
    echo "bench-deman: $deps already holds $t (it would be read, not built): give a directory without it" >&2
    exit 1
  fi
done
cargo build --release --quiet
bin=$PWD/target/release/antitb
work=$(mktemp -d /tmp/antitb-deman.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run NAME DIR command...: "wall_s cpu_s rss_kb" of the command, run in DIR.
run() {
  local name=$1 dir=$2; shift 2
  local t="$work/$name.time"
  (cd "$dir" && /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" > "$work/$name.out" 2>&1) || {
    echo "bench-deman: $name failed:" >&2; tail -n 5 "$work/$name.out" >&2; exit 1; }
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$t"
}

printf '%-8s %-7s %9s %9s %9s %12s\n' table who wall_s cpu_s rss_MB wdl+dtz_B
for t in "${tables[@]}"; do
  mkdir -p "$work/deman" "$work/antitb"
  read -r dw dc dr < <(run "$t.deman" "$work/deman" env GTBPATH="$ref" "$gtbgen" -t "$threads" -p "$t")
  db=$(( $(stat -c %s "$work/deman/$t.gtbw") + $(stat -c %s "$work/deman/$t.gtbz") ))
  read -r aw ac ar < <(run "$t.antitb" "$work" "$bin" generate "$t" --tables "$work/antitb" \
    --with-tables "$deps" --metrics wdl,dtz --no-checksums --quiet --threads "$threads")
  ab=$(( $(stat -c %s "$work/antitb/$t.wdl") + $(stat -c %s "$work/antitb/$t.dtz") ))
  printf '%-8s %-7s %9s %9s %9d %12d\n' "$t" deman "$dw" "$dc" $((dr / 1024)) "$db"
  printf '%-8s %-7s %9s %9s %9d %12d\n' "$t" antitb "$aw" "$ac" $((ar / 1024)) "$ab"
  awk -v t="$t" -v aw="$aw" -v dw="$dw" -v ac="$ac" -v dc="$dc" -v ar="$ar" -v dr="$dr" \
    -v ab="$ab" -v db="$db" 'BEGIN { printf "%-8s ratio   %8.2fx %8.2fx %8.2fx %11.2fx   (goals: time <= 0.5x, RSS <= 1x, bytes <= 1.5x)\n", t, aw/dw, ac/dc, ar/dr, ab/db }'
  rm -rf "$work/deman" "$work/antitb"
done
