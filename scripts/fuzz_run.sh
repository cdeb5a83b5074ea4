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
# MT_FUZZ_TIMEOUT=S the per-input timeout (default 10 s). Prints the last
# status line and the final stats; exit 1 on any crash, sanitizer report,
# leak, timeout or memory blow-up (-rss_limit_mb=2048).
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
rc=0
"$bin" "${fork[@]}" -max_total_time="$secs" -timeout="${MT_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name-" "$@" \
    "$dir/corpus/$name" "$dir/seeds/$name" >"$log" 2>&1 || rc=$?
# the last status line and the final stats (not printed in fork mode): execs, time, coverage
grep -E '^#[0-9]+' "$log" | tail -1 || true
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
if [ "$rc" -ne 0 ] || grep -qE '^==[0-9]+==ERROR|^SUMMARY: |runtime error:|^MS: ' "$log"; then
  grep -E 'ERROR|SUMMARY|runtime error|fuzz_[a-z]*:|Test unit written' "$log" | head -20 >&2
  echo "fuzz: $name FAILED (see $log; the input is in $dir/artifacts/)" >&2
  exit 1
fi
