#!/usr/bin/env bash
# Proof library lookups (issue 17), text against binary in the same run: for each binary proof,
# the time of ProofLibrary::get (read, check with the checker of the format, read back) from a
# library holding it as text (the anchor) and from one holding it in binary, and the bytes of
# both files (examples/library_lookup_bench.rs; ratios binary/text).
#
# Usage: scripts/bench-library-lookup.sh [TABLES_DIR] [PROOF_FILE.proofb...]
#   TABLES_DIR   the tables the proofs' table leaves need (default: tables)
#   PROOF_FILE   binary proofs (default: the largest of proofs/e3, 268 740 nodes)
#   Environment: ROUNDS (default 7), the lookups of each format, alternated.
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:-tables}
[ $# -gt 0 ] && shift
[ -d "$tables" ] || { echo "no table directory $tables" >&2; exit 2; }
if [ $# -gt 0 ]; then files=("$@"); else files=(proofs/e3/a73ac79239a5f565.proofb); fi
cargo build --release --quiet --example library_lookup_bench
for f in "${files[@]}"; do
  printf '%s: ' "$(basename "$f")"
  target/release/examples/library_lookup_bench "$tables" "$f" "${ROUNDS:-7}"
done
