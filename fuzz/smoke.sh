#!/usr/bin/env bash
# Smoke run of every fuzz target from the committed corpus (fuzz/README.md): FUZZ_SECONDS
# (default 20) seconds each. New inputs go to a scratch directory, so the committed corpus is
# unchanged. Installs cargo-fuzz if it is missing (needs the nightly toolchain). Exits non-zero
# if a build fails or a target finds a crash (the input is then in fuzz/artifacts/TARGET/).
set -euo pipefail
cd "$(dirname "$0")"
seconds=${FUZZ_SECONDS:-20}
targets=(fen table_file proof material serve)
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
cargo +nightly fuzz build
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  echo "fuzz smoke: $t (${seconds} s)" >&2
  # The first use builds the <=3-piece tables into fuzz/target/tables3 (kept for later runs).
  cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    2> "$scratch/$t.log" || { tail -n 60 "$scratch/$t.log" >&2; exit 1; }
  grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$scratch/$t.log" >&2 || true
done
echo "fuzz smoke: all ${#targets[@]} targets ran ${seconds} s each without a finding" >&2
