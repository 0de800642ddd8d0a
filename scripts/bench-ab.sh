#!/usr/bin/env bash
# Before and after on a shared, noisy machine: two antitb binaries build the same tables in
# turn (A B A B …, ROUNDS rounds), and the script prints every run (wall, CPU, peak RSS, and the
# CPU time the hypervisor stole meanwhile) and the best run of each with the ratios B / A. The
# files of both must be byte for byte the same (else exit 1): a speed change must not change
# a table.
#
#   scripts/bench-ab.sh A_BIN B_BIN DEPS_DIR [ROUNDS] [METRICS] [TABLE...]
#
# A_BIN, B_BIN: two builds of antitb (copy target/release/antitb aside before rebuilding).
# DEPS_DIR: tables the targets read (`antitb generate --max-pieces 4 --tables DIR`).
# ROUNDS defaults to 3, METRICS to wdl,dtz, the tables to KQRBvN (every capture of which leads
# to four pieces). Both build with 2 threads, as the de Man anchors of issue 14 are measured.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/bench-ab.sh A_BIN B_BIN DEPS_DIR [ROUNDS] [METRICS] [TABLE...]" >&2; exit 2; }
a=$(realpath "$1"); b=$(realpath "$2"); deps=$(realpath "$3")
rounds=${4:-3}; metrics=${5:-wdl,dtz}
shift $(( $# >= 5 ? 5 : $# ))
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(KQRBvN)
for x in "$a" "$b"; do [ -x "$x" ] || { echo "bench-ab: $x is not an executable" >&2; exit 1; }; done
work=$(mktemp -d /tmp/antitb-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
steal() { awk '/^cpu /{print $9}' /proc/stat; }

for t in "${tables[@]}"; do
  for r in $(seq "$rounds"); do
    for side in A B; do
      bin=$a; [ $side = B ] && bin=$b
      out=$work/$side; rm -rf "$out"; mkdir -p "$out"
      s0=$(steal)
      /usr/bin/time -o "$work/time" -f "%e %U %S %M" "$bin" generate "$t" --tables "$out" \
        --with-tables "$deps" --metrics "$metrics" --threads 2 --no-checksums --quiet
      s1=$(steal)
      read -r wall user sys rss < "$work/time"
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.1f", u+s}')
      printf '%-10s %s round %d: wall %7.1f s  CPU %7.1f s  peak RSS %5d MB  stolen %4d jiffies\n' \
        "$t" "$side" "$r" "$wall" "$cpu" $((rss / 1024)) $((s1 - s0))
      echo "$side $wall $cpu $rss" >> "$work/$t.runs"
    done
    for f in "$work/A/$t".*; do
      cmp -s "$f" "$work/B/$(basename "$f")" || { echo "bench-ab: $t: $(basename "$f") differs between A and B" >&2; exit 1; }
    done
  done
  awk -v t="$t" '
    { if (!($1 in w) || $2 < w[$1]) w[$1] = $2; if (!($1 in c) || $3 < c[$1]) c[$1] = $3;
      if (!($1 in m) || $4 < m[$1]) m[$1] = $4 }
    END { printf "%-10s best of each: A wall %.1f s CPU %.1f s RSS %d MB; B wall %.1f s CPU %.1f s RSS %d MB; B/A wall %.3fx CPU %.3fx RSS %.3fx (files identical)\n",
      t, w["A"], c["A"], m["A"]/1024, w["B"], c["B"], m["B"]/1024, w["B"]/w["A"], c["B"]/c["A"], m["B"]/m["A"] }' "$work/$t.runs"
done
