#!/usr/bin/env bash
# The Slurm test (tests/slurm.rs): every table up to 3 pieces built through a real Slurm by the
# jobs `antitb plan --format slurm` submits, on a private one-node cluster of this machine
# (scripts/slurm-cluster.sh), checked against a direct `antitb generate` and tables/CHECKSUMS,
# with a failing job, its cancelled dependants, and the resubmission after the repair.
#
#   scripts/slurm-test.sh [--install]      (as root; .ci/run passes --install)
#
# --install: apt-get install the Debian packages it needs (munge slurmctld slurmd slurm-client)
# where they are missing. Where they cannot be installed or the daemons cannot start, the test
# says so and fails: it never skips. Prints "slurm test: PASS" or "slurm test: FAIL (...)".
set -euo pipefail
cd "$(dirname "$0")/.."
packages="munge slurmctld slurmd slurm-client"
fail() { echo "slurm test: FAIL ($*)"; exit 1; }

if [ "${1:-}" = --install ]; then
  missing=
  for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "slurm test: installing$missing"
    command -v apt-get >/dev/null || fail "apt-get not found: install$missing by hand"
    export DEBIAN_FRONTEND=noninteractive
    t=$(date +%s)
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >/dev/null \
      || fail "apt-get could not install$missing"
    echo "slurm test: installed in $(( $(date +%s) - t )) s"
  fi
fi

cargo test --quiet --test slurm --no-run || fail "the test does not build"
start=$(date +%s)
if scripts/slurm-cluster.sh cargo test --quiet --test slurm -- --ignored --nocapture; then
  echo "slurm test: PASS ($(( $(date +%s) - start )) s)"
else
  fail "see above; $(( $(date +%s) - start )) s"
fi
