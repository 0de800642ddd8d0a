#!/usr/bin/env bash
# Probe benchmark (issue 4): probes per second of antitb's Tablebase on its <=4-piece tables
# against shakmaty-syzygy on the reference Syzygy tables: 34 020 random positions (60 per 4-piece
# table, no en passant), WDL and DTZ each, same positions, same run, one thread, warm (each set
# is probed twice and the second pass timed). Prints both rates and the ratio antitb / syzygy.
# Reference anchor (../shared/reference/syzygy/README.md): shakmaty-syzygy about 70 000 probes/s.
# Usage: scripts/bench-probe.sh [ANTITB_DIR] [--syzygy DIR] [--cache N] [--seed S]
#   (ANTITB_DIR default: /tmp/tb4, all <=4-piece WDL + DTZ files, e.g. from
#    `antitb generate --max-pieces 4 --tables /tmp/tb4`)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example bench_probe
exec target/release/examples/bench_probe "$@"
