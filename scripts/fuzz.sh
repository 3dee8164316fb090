#!/bin/sh
# Build the libFuzzer targets (clang, ASan + UBSan) and run each for a while.
#   scripts/fuzz.sh BUILD_DIR SECONDS PARALLEL [TARGET...]
# New inputs go to BUILD_DIR/fuzz-corpus/TARGET (the committed corpus in
# tests/fuzz/corpus/TARGET is read, never written); crashes to
# BUILD_DIR/fuzz-artifacts/TARGET, logs to BUILD_DIR/fuzz-logs. At the end one
# line per target: executions, exec/s, coverage, corpus, and the verdict.
# Merge what adds coverage into the committed corpus with
#   BUILD_DIR/tests/fuzz_T -merge=1 tests/fuzz/corpus/T BUILD_DIR/fuzz-corpus/T
set -eu
build=$1 seconds=$2 parallel=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
targets=${*:-"codec_decode zarr_json shard_read dataset_open"}

[ -f "$build/CMakeCache.txt" ] || CC=clang cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDCTK_FUZZ=ON
cmake --build "$build" -j 2 --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done)
mkdir -p "$build/fuzz-logs"

run_one() {
  t=$1
  mkdir -p "$build/fuzz-corpus/$t" "$build/fuzz-artifacts/$t"
  # rss 4 GiB: the readers may hold one 2 GiB GRIB message or 1 GiB chunk (and ASan's shadow)
  # eccodes, libnetcdf and HDF5 leak on some damaged files (not ours): see the file
  LSAN_OPTIONS=suppressions=$here/tests/fuzz/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1 \
    nice -n 10 "$build/tests/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t/" "$build/fuzz-corpus/$t" "$here/tests/fuzz/corpus/$t" \
    > "$build/fuzz-logs/$t.log" 2>&1 || true
}

i=0
for t in $targets; do
  run_one "$t" &
  i=$((i + 1))
  [ $((i % parallel)) -eq 0 ] && wait
done
wait

bad=0
for t in $targets; do
  log=$build/fuzz-logs/$t.log
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\/[0-9a-zA-Z]*\).*/cov \1 ft \2 corpus \3/p')
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |runtime error|^fuzz: ' "$log"; then
    verdict="FAILED (see $log)"
    bad=1
  else
    verdict=ok
  fi
  echo "fuzz $t: ${execs:-?} executions, ${rate:-?} exec/s, $cov: $verdict"
done
exit $bad
