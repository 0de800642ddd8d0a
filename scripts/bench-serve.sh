#!/usr/bin/env bash
# HTTP load benchmark of `antitb serve` (issue 16), against lila-tablebase as the anchor when one
# is given. Loopback only; bounded: 20 s per run (SECONDS_PER_RUN), concurrency 1 and 8, one
# warm-up pass per server.
#
# Requests: GET /antichess?fen=... over the lila fixture's FENs (../shared/reference/lila/fens.txt)
# plus 2 000 random <=4-piece positions (fixed seed), cycled by wrk with keep-alive; every request
# is probed (antitb has no response cache; run lila with --cache 0). Prints requests/s, p50 and
# p99 latency per server and concurrency, and the ratios antitb / lila measured in the same run.
#
# Usage: scripts/bench-serve.sh TABLES_DIR [LILA_BINARY]
#   TABLES_DIR   every <=4-piece antitb table (e.g. `antitb generate --max-pieces 4 --tables DIR`)
#   LILA_BINARY  a lila-tablebase build (not made by this script); it is run with
#                --antichess $SYZYGY (default ../shared/reference/syzygy) --cache 0
# Environment: SECONDS_PER_RUN (20), THREADS (antitb --threads; default: all cores), NICE (10).
# Needs: wrk, python3, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${1:?usage: scripts/bench-serve.sh TABLES_DIR [LILA_BINARY]}
LILA=${2:-}
SYZYGY=${SYZYGY:-../shared/reference/syzygy}
SECS=${SECONDS_PER_RUN:-20}
NICE=${NICE:-10}
FENS=../shared/reference/lila/fens.txt
for tool in wrk python3 curl; do
  command -v "$tool" >/dev/null || { echo "bench-serve: $tool is required" >&2; exit 2; }
done
[ -f "$FENS" ] || { echo "bench-serve: $FENS is missing" >&2; exit 2; }

cargo build --release --quiet
WORK=$(mktemp -d /tmp/antitb-bench-serve.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Request paths: the fixture's FENs and 2 000 random <=4-piece positions (both sides have a
# piece, pawns on ranks 2-7, either side to move).
python3 - "$FENS" > "$WORK/paths.txt" <<'EOF'
import random, sys
paths = []
for line in open(sys.argv[1]):
    fen = line.strip()
    if fen:
        paths.append(fen)
fixture = len(paths)
rng = random.Random(16)
while len(paths) < fixture + 2000:
    n = rng.randint(2, 4)
    pieces = [rng.choice("KQRBNP") for _ in range(n)]
    white = rng.randint(1, n - 1)
    squares = rng.sample(range(64), n)
    if any(p == "P" and sq // 8 in (0, 7) for p, sq in zip(pieces, squares)):
        continue
    board = {sq: (p if i < white else p.lower()) for i, (p, sq) in enumerate(zip(pieces, squares))}
    ranks = []
    for r in range(7, -1, -1):
        row, empty = "", 0
        for f in range(8):
            c = board.get(8 * r + f)
            if c is None:
                empty += 1
            else:
                row += (str(empty) if empty else "") + c
                empty = 0
        ranks.append(row + (str(empty) if empty else ""))
    paths.append("/".join(ranks) + " " + rng.choice("wb") + " - - 0 1")
for fen in paths:
    print("/antichess?fen=" + fen.replace(" ", "_"))
EOF
cat > "$WORK/paths.lua" <<EOF
local paths = {}
for line in io.lines("$WORK/paths.txt") do paths[#paths + 1] = line end
local threads = 0
function setup(thread)
  thread:set("offset", threads * 997)
  threads = threads + 1
end
function init(args) i = offset or 0 end
function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
EOF
echo "bench-serve: $(wc -l < "$WORK/paths.txt") request paths, ${SECS} s per run"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { # URL
  for _ in $(seq 1 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "bench-serve: no answer from $1" >&2; exit 1
}

declare -A URL
PORT=$(free_port)
THREAD_ARGS=()
[ -n "${THREADS:-}" ] && THREAD_ARGS=(--threads "$THREADS")
nice -n "$NICE" target/release/antitb serve --tables "$TABLES" --bind "127.0.0.1:$PORT" \
  "${THREAD_ARGS[@]}" 2> "$WORK/antitb.log" &
PIDS+=($!)
URL[antitb]="http://127.0.0.1:$PORT"
SERVERS=(antitb)
if [ -n "$LILA" ]; then
  LPORT=$(free_port)
  nice -n "$NICE" "$LILA" --antichess "$SYZYGY" --cache 0 --bind "127.0.0.1:$LPORT" \
    2> "$WORK/lila.log" &
  PIDS+=($!)
  URL[lila]="http://127.0.0.1:$LPORT"
  SERVERS+=(lila)
fi
START_FEN="/antichess?fen=8/8/8/3K4/8/8/8/5r2_b_-_-_0_1"
for s in "${SERVERS[@]}"; do wait_up "${URL[$s]}$START_FEN"; done

# Warm-up: every path once per server (opens and maps every table); counts the non-200s.
for s in "${SERVERS[@]}"; do
  bad=0
  while read -r p; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "${URL[$s]}$p")
    [ "$code" = 200 ] || bad=$((bad + 1))
  done < "$WORK/paths.txt"
  echo "bench-serve: $s warmed up; non-200 answers: $bad"
done

# wrk runs; both servers alternate within each concurrency so that load drift hits both alike.
declare -A RPS P50 P99
to_ms() { # wrk latency such as 812.00us, 1.23ms, 2.01s -> milliseconds
  python3 -c "import sys,re; v=sys.argv[1]; n=float(re.match(r'[0-9.]+',v).group()); u=v[len(re.match(r'[0-9.]+',v).group()):]; print(round(n*{'us':1e-3,'ms':1,'s':1e3,'m':6e4}[u],3))" "$1"
}
for c in 1 8; do
  t=$(( c < 2 ? 1 : 2 ))
  for s in "${SERVERS[@]}"; do
    nice -n "$NICE" wrk -t"$t" -c"$c" -d"${SECS}s" --latency -s "$WORK/paths.lua" "${URL[$s]}" \
      > "$WORK/wrk-$s-$c.txt"
    RPS[$s,$c]=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/wrk-$s-$c.txt")
    P50[$s,$c]=$(to_ms "$(awk '$1 == "50%" {print $2}' "$WORK/wrk-$s-$c.txt")")
    P99[$s,$c]=$(to_ms "$(awk '$1 == "99%" {print $2}' "$WORK/wrk-$s-$c.txt")")
    errors=$(awk '/Non-2xx|Socket errors/' "$WORK/wrk-$s-$c.txt")
    [ -z "$errors" ] || echo "bench-serve: $s c=$c: $errors"
  done
done

printf '\n%-8s %4s %12s %10s %10s\n' server conc 'requests/s' 'p50 ms' 'p99 ms'
for c in 1 8; do
  for s in "${SERVERS[@]}"; do
    printf '%-8s %4s %12s %10s %10s\n' "$s" "$c" "${RPS[$s,$c]}" "${P50[$s,$c]}" "${P99[$s,$c]}"
  done
done
if [ -n "$LILA" ]; then
  echo
  for c in 1 8; do
    python3 -c "import sys; a,l=map(float,sys.argv[2:4]); print(f'c={sys.argv[1]}: antitb/lila throughput {a/l:.2f}x')" \
      "$c" "${RPS[antitb,$c]}" "${RPS[lila,$c]}"
  done
fi
