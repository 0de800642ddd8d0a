
# ---- The submitter (the same in every script `antitb plan --format slurm` writes) ----
# Options: --dry-run prints the sbatch commands instead of running them; --hold submits the
# jobs held (release them with `scontrol release JOBID,...`); --max-jobs N stops after N jobs
# (array tasks count one each); after `--`, options for every sbatch call
# (`-- --partition=long --mail-type=FAIL`).
# Environment: ANTITB (the binary on the compute nodes), LOGS (job logs and the job list), and
# sbatch's own input variables (SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_QOS, ...).
# Each job runs `$ANTITB ${GENERATE[*]} MATERIAL`: it builds that table only, reading its
# dependencies from the table directories, and fails with a one-line error if one is missing
# or corrupt. Its log is $LOGS/MATERIAL.log (a link to the log of its latest job).
# $LOGS/jobs lists `MATERIAL JOBID` per submission. A table whose last job is still queued or
# running is not submitted again: the jobs that need it wait for that job. To resubmit after
# failures, write this script again with the same `antitb plan` command (tables present by then
# drop out) and run it.
# Exit status: 0 all submitted; 1 an error (sbatch refused a job: see its message); 3 stopped
# by --max-jobs (run it again later).

DRY=0
MAX_JOBS=
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY=1 ;;
    --hold) EXTRA+=(--hold) ;;
    --max-jobs)
      MAX_JOBS=${2:-}
      [[ $MAX_JOBS =~ ^[0-9]+$ ]] || { echo "submit: --max-jobs needs a number" >&2; exit 2; }
      shift ;;
    --) shift; EXTRA+=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "submit: unknown option '$1' (--dry-run, --hold, --max-jobs N, -- SBATCH_OPTIONS)" >&2; exit 2 ;;
  esac
  shift
done

declare -A JOB=()   # material -> the job id it waits on (submitted or reused in this run)
declare -A LIVE=()  # job id -> state, for jobs still in the queue
declare -A LAST=()  # material -> job id last recorded in $LOGS/jobs
SUBMITTED=0
REUSED=0
SUBMISSIONS=0
JOB_SCRIPT=$LOGS/antitb-job.sh
JOBS_FILE=$LOGS/jobs

if [ "$DRY" = 0 ]; then
  for c in sbatch squeue; do
    command -v "$c" >/dev/null || { echo "submit: $c not found: run this on a Slurm login node" >&2; exit 1; }
  done
  [ -x "$ANTITB" ] || { echo "submit: $ANTITB is not an executable: set ANTITB to the antitb binary the compute nodes run" >&2; exit 1; }
  mkdir -p "$LOGS"
  states=$(squeue --me --noheader --array --format '%i %T') || { echo "submit: squeue failed" >&2; exit 1; }
  while read -r id state; do
    [ -n "$id" ] && LIVE[$id]=$state
  done <<< "$states"
  if [ -f "$JOBS_FILE" ]; then
    while read -r m id; do LAST[$m]=$id; done < "$JOBS_FILE"
  fi
  # The batch script of every job: the material is its argument (in an array, argument number
  # SLURM_ARRAY_TASK_ID + 1). sbatch stores a copy with each job.
  {
    echo '#!/usr/bin/env bash'
    echo '# One antitb table job, submitted by a script of `antitb plan --format slurm`.'
    echo 'set -eu'
    echo 'if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then shift "$SLURM_ARRAY_TASK_ID"; fi'
    echo 'echo "antitb: job ${SLURM_JOB_ID:-?} on $(hostname): $1"'
    printf 'exec %q' "$ANTITB"
    printf ' %q' "${GENERATE[@]}"
    echo ' "$1"'
  } > "$JOB_SCRIPT.tmp.$$"
  chmod +x "$JOB_SCRIPT.tmp.$$"
  mv "$JOB_SCRIPT.tmp.$$" "$JOB_SCRIPT"
fi

# submit MEM_MIB MINUTES 'TABLES WAITED FOR' TABLE...: one job, or a job array of the tables.
submit() {
  local mem=$1 minutes=$2 deps=$3
  shift 3
  local todo=() m id
  for m in "$@"; do
    id=${LAST[$m]:-}
    if [ -n "$id" ] && [ -n "${LIVE[$id]:-}" ]; then
      JOB[$m]=$id
      REUSED=$((REUSED + 1))
      echo "$m: job $id is ${LIVE[$id]}, not submitted again"
    else
      todo+=("$m")
    fi
  done
  [ ${#todo[@]} -gt 0 ] || return 0
  local stop=0
  if [ -n "$MAX_JOBS" ] && [ $((SUBMITTED + ${#todo[@]})) -gt "$MAX_JOBS" ]; then
    # Submit what fits (the first tasks of an array), then stop.
    stop=1
    todo=("${todo[@]:0:$((MAX_JOBS - SUBMITTED))}")
    [ ${#todo[@]} -gt 0 ] || limit_reached
  fi
  local ids=() d
  for d in $deps; do
    [ -n "${JOB[$d]:-}" ] || { echo "submit: $d has no job to wait for (a bug of the script)" >&2; exit 1; }
    ids+=("${JOB[$d]}")
  done
  local args=(--parsable --mem="${mem}M" --time="$minutes" --cpus-per-task="$THREADS"
    --kill-on-invalid-dep=yes ${EXTRA[@]+"${EXTRA[@]}"})
  if [ ${#ids[@]} -gt 0 ]; then
    args+=(--dependency="afterok:$(IFS=:; echo "${ids[*]}")")
  fi
  if [ ${#todo[@]} -eq 1 ]; then
    args+=(--job-name="${todo[0]}" --output="$LOGS/${todo[0]}.%j.log")
  else
    args+=(--job-name="${todo[0]}+$((${#todo[@]} - 1))" --array="0-$((${#todo[@]} - 1))"
      --output="$LOGS/array.%A_%a.log")
  fi
  SUBMISSIONS=$((SUBMISSIONS + 1))
  if [ "$DRY" = 1 ]; then
    echo "sbatch ${args[*]} $JOB_SCRIPT ${todo[*]}"
    id=dry$SUBMISSIONS
  else
    id=$(sbatch "${args[@]}" "$JOB_SCRIPT" "${todo[@]}") \
      || { echo "submit: sbatch refused ${todo[*]} ($SUBMITTED jobs submitted so far, listed in $JOBS_FILE)" >&2; exit 1; }
    id=${id%%;*}
  fi
  local i=0 jid log
  for m in "${todo[@]}"; do
    if [ ${#todo[@]} -eq 1 ]; then
      jid=$id
      log=$m.$id.log
    else
      jid=${id}_$i
      log=array.${id}_$i.log
    fi
    JOB[$m]=$jid
    if [ "$DRY" = 0 ]; then
      echo "$m $jid" >> "$JOBS_FILE"
      ln -sfn "$log" "$LOGS/$m.log"
    fi
    i=$((i + 1))
  done
  SUBMITTED=$((SUBMITTED + ${#todo[@]}))
  [ "$stop" = 0 ] || limit_reached
}

limit_reached() {
  echo "submit: stopping at --max-jobs $MAX_JOBS ($SUBMITTED jobs submitted): run this again (written anew) once some have finished"
  exit 3
}

finish() {
  echo "submit: $SUBMITTED tables in $SUBMISSIONS sbatch submissions, $REUSED waiting on jobs already queued; logs in $LOGS"
}
