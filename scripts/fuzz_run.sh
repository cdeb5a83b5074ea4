#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time and judges the result
# (scripts/fuzz.sh calls it, and the run.sh that scripts/fuzz_pack.sh packs):
#
#     scripts/fuzz_run.sh BINARY NAME SECONDS DIR SUPPRESSIONS [LIBFUZZER-ARGS...]
#
# DIR/corpus/NAME (grown) and DIR/seeds/NAME are the inputs; libFuzzer's report
# goes to DIR/logs/NAME.log, a finding's input to DIR/artifacts/NAME-*.
# SUPPRESSIONS is the LeakSanitizer suppressions file. MT_FUZZ_FORK=N runs N
# worker processes (-fork=N, with crashes, timeouts and OOMs not ignored);
# MT_FUZZ_JOBS=N instead runs N whole fuzzers at once on the one corpus
# (-jobs=N -workers=N: each runs -runs=R itself, so R is per job; their
# reports are DIR/logs/NAME-job-K.log, and the executions of the run are the
# sum of theirs); MT_FUZZ_TIMEOUT=S the per-input timeout (default 10 s).
# Prints the last status line and the final stats; exit 1 on any crash,
# sanitizer report, leak, timeout or memory blow-up (-rss_limit_mb=2048).
set -uo pipefail
bin=$1 name=$2 secs=$3 dir=$4 supp=$5
shift 5
mkdir -p "$dir/corpus/$name" "$dir/logs" "$dir/artifacts"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
log="$dir/logs/$name.log"
fork=()
if [ -n "${MT_FUZZ_FORK:-}" ]; then
  # fork mode ignores timeouts and OOMs by default; we do not
  fork=(-fork="$MT_FUZZ_FORK" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0)
fi
if [ -n "${MT_FUZZ_JOBS:-}" ]; then
  # libFuzzer writes job K's report to fuzz-K.log in the working directory
  work="$(mktemp -d)"
  abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
  abin="$(abs "$bin")" adir="$(abs "$dir")"
  rc=0
  (cd "$work" && "$abin" -jobs="$MT_FUZZ_JOBS" -workers="$MT_FUZZ_JOBS" -max_total_time="$secs" \
      -timeout="${MT_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$adir/artifacts/$name-" "$@" "$adir/corpus/$name" "$adir/seeds/$name") >"$log" 2>&1 || rc=$?
  total=0 bad=0
  for k in $(seq 0 $((MT_FUZZ_JOBS - 1))); do
    jl="$dir/logs/$name-job-$k.log"
    mv "$work/fuzz-$k.log" "$jl" 2>/dev/null || { echo "fuzz: $name job $k wrote no report" >&2; bad=1; continue; }
    grep -E '^#[0-9]+' "$jl" | tail -1 || true
    n=$(grep -E '^stat::number_of_executed_units' "$jl" | awk '{print $2}')
    total=$((total + ${n:-0}))
    if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |runtime error:|^MS: |Test unit written' "$jl"; then
      grep -E 'ERROR|SUMMARY|runtime error|fuzz(_[a-z]*)?:|Test unit written' "$jl" | head -20 >&2
      bad=1
    fi
  done
  rm -rf "$work"
  echo "stat::number_of_executed_units (all jobs): $total"
  if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
    echo "fuzz: $name FAILED (see $dir/logs/$name-job-*.log; the input is in $dir/artifacts/)" >&2
    exit 1
  fi
  exit 0
fi
rc=0
"$bin" "${fork[@]}" -max_total_time="$secs" -timeout="${MT_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name-" "$@" \
    "$dir/corpus/$name" "$dir/seeds/$name" >"$log" 2>&1 || rc=$?
# the last status line and the final stats (not printed in fork mode): execs, time, coverage
grep -E '^#[0-9]+' "$log" | tail -1 || true
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
if [ "$rc" -ne 0 ] || grep -qE '^==[0-9]+==ERROR|^SUMMARY: |runtime error:|^MS: ' "$log"; then
  grep -E 'ERROR|SUMMARY|runtime error|fuzz(_[a-z]*)?:|Test unit written' "$log" | head -20 >&2
  echo "fuzz: $name FAILED (see $log; the input is in $dir/artifacts/)" >&2
  exit 1
fi
