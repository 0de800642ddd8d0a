#!/usr/bin/env bash
# Write tables/CHECKSUMS: the SHA-256 (sha256sum format) of every table file up to 4 pieces.
#
#   scripts/checksums.sh [TABLE_DIR]
#
# Builds whatever is missing in TABLE_DIR (default: tables/) with `antitb generate
# --max-pieces 4` first (WDL, DTZ and DTW files), then hashes every .wdl, .dtz and .dtw file of
# at most 4 pieces. Table files are deterministic, so the list vouches for anyone's build:
# `antitb generate` compares against TABLE_DIR/CHECKSUMS at the end, `antitb checksums --against
# tables/CHECKSUMS` on demand, and `sha256sum -c CHECKSUMS` works inside the table directory.
# Rerun this after any change that alters table bytes (solver, index, format, encoding).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-tables}
cargo run --release --quiet -- generate --max-pieces 4 --tables "$dir" --no-checksums --quiet
out=tables/CHECKSUMS
tmp=$(mktemp "$out.XXXXXX")
# Table files of 2 to 4 pieces: 1 to 3 piece letters a side, at most 4 letters in all.
(cd "$dir" && ls -1 | grep -E '^[KQRBNP]{1,3}v[KQRBNP]{1,3}\.(wdl|dtz|dtw)$' \
  | awk -F. 'length($1) <= 5' | LC_ALL=C sort | xargs -r sha256sum) > "$tmp"
mv "$tmp" "$out"
echo "$(wc -l < "$out") checksums written to $out"
