#!/usr/bin/env bash
# Perft benchmark: antitb's move generator vs shakmaty's Antichess (node counts must agree).
# Prints nodes/second for both and the ratio ours/shakmaty, best of 3 runs per position.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release --example bench_perft "$@"
