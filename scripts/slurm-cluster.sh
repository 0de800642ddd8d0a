#!/usr/bin/env bash
# Run a command against a private one-node Slurm cluster on this machine.
#
#   scripts/slurm-cluster.sh COMMAND [ARGS...]     (as root)
#
# Starts munged, slurmctld and slurmd (Debian's `munge`, `slurmctld`, `slurmd`, `slurm-client`,
# Slurm 22.05) with scripts/slurm/slurm.conf.in, every file they write in a temporary directory;
# runs COMMAND with SLURM_CONF set (sbatch, squeue, scontrol then talk to this cluster); then
# cancels every job and stops the daemons, whatever happens (the command fails, Ctrl-C, a kill).
# The node advertises this machine's CPUs and 90% of its memory. Ports: the first free pair from
# 16817. Set KEEP_SLURM_STATE=1 to keep the temporary directory (configuration and logs).
# Exit status: the command's, or 1 when the cluster cannot start (the reason is printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "slurm-cluster: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
[ "$(id -u)" = 0 ] || fail "must run as root (slurmd starts the jobs' processes as their users)"
for c in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$c" >/dev/null \
    || fail "$c not found: install the packages (apt-get install munge slurmctld slurmd slurm-client)"
done

state=$(mktemp -d /tmp/antitb-slurm.XXXXXX)
chmod 755 "$state"
munged_pid= ctld_pid= slurmd_pid=

stop_pid() { # PID NAME: TERM, then KILL after 10 s
  local pid=$1 i
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill "$pid" 2>/dev/null || true
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  say "$2 ($pid) did not stop on TERM: killing it"
  kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$? i ids
  trap - EXIT INT TERM
  if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
    ids=$(squeue --noheader --format %A 2>/dev/null | sort -u || true)
    if [ -n "$ids" ]; then
      say "cancelling the jobs still queued or running: $(echo $ids)"
      # shellcheck disable=SC2086
      scancel $ids 2>/dev/null || true
      for i in $(seq 300); do
        [ -z "$(squeue --noheader --format %A 2>/dev/null)" ] && break
        sleep 0.1
      done
    fi
  fi
  stop_pid "$slurmd_pid" slurmd
  stop_pid "$ctld_pid" slurmctld
  stop_pid "$munged_pid" munged
  if [ "${KEEP_SLURM_STATE:-0}" = 1 ]; then
    say "state kept in $state"
  else
    rm -rf "$state"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
  local f
  for f in "$state"/munge/munged.log "$state"/slurmctld.log "$state"/slurmd.log; do
    [ -f "$f" ] && { say "last lines of $f:"; tail -n 15 "$f" >&2; }
  done
  return 0
}

# A TCP port nobody listens on (a connection to it is refused).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=16817
while ! port_free "$ctld_port" || ! port_free "$((ctld_port + 1))"; do
  ctld_port=$((ctld_port + 2))
  [ "$ctld_port" -lt 16917 ] || fail "no free port pair between 16817 and 16917"
done

# munged with its own key and socket.
mkdir -m 700 "$state/munge"
mungekey --create --keyfile="$state/munge/munge.key" >/dev/null 2>&1 \
  || fail "mungekey could not create a key in $state/munge"
munged --force --foreground --socket="$state/munge/munge.socket" \
  --key-file="$state/munge/munge.key" --pid-file="$state/munge/munged.pid" \
  --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed" \
  2>>"$state/munge/munged.log" &
munged_pid=$!
for i in $(seq 100); do [ -S "$state/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$state/munge/munge.socket" ] || { show_logs; fail "munged did not start"; }

# The configuration: this machine's CPUs and 90% of its memory.
cpus=$(nproc)
memory_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
host=$(hostname -s)
node=antitb-node
sed -e "s|@STATE@|$state|g" -e "s|@HOST@|$host|g" -e "s|@NODE@|$node|g" \
  -e "s|@CPUS@|$cpus|g" -e "s|@MEMORY_MB@|$memory_mb|g" \
  -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$((ctld_port + 1))|g" \
  "$here/slurm/slurm.conf.in" > "$state/slurm.conf"
! grep -q '@[A-Z_]*@' "$state/slurm.conf" || fail "unfilled names in $state/slurm.conf"
export SLURM_CONF=$state/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" 2>>"$state/slurmctld.log" &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" -N "$node" 2>>"$state/slurmd.log" &
slurmd_pid=$!

# Wait for the node to be idle (60 s at most).
up=
for i in $(seq 600); do
  kill -0 "$ctld_pid" 2>/dev/null || break
  kill -0 "$slurmd_pid" 2>/dev/null || break
  if [ "$(sinfo --noheader --nodes="$node" --format %T 2>/dev/null)" = idle ]; then up=1; break; fi
  sleep 0.1
done
if [ -z "$up" ]; then
  show_logs
  fail "the cluster did not come up (node state: $(sinfo --noheader --format %T 2>/dev/null || echo unknown))"
fi
say "cluster up: node $node with $cpus CPUs and $memory_mb MB, slurmctld on port $ctld_port, state in $state"
set +e
"$@"
rc=$?
set -e
exit "$rc"
