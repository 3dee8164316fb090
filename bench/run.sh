#!/bin/sh
# Runs the benchmarks: bench/run.sh [BUILD_DIR] (default: build). Each prints its
# own table, with every figure measured side by side in the same run.
set -e
B=${1:-build}
here=$(dirname "$0")
# the Zarr writer: 1 and 2 threads, overhead over raw codec time, memory
"$B/tests/bench_zarr" "${TMPDIR:-/tmp}"
# compressors against numcodecs (Debian python3 with python3-numcodecs)
/usr/bin/python3 "$here/codecs.py" "$B"
# the same two in instruction counts under callgrind, which a loaded machine
# does not move (minutes: every call runs about 50 times slower)
if command -v valgrind >/dev/null 2>&1; then
  /usr/bin/python3 "$here/zarr_instr.py" "$B"
  /usr/bin/python3 "$here/zarr_instr.py" "$B" 8 8
  /usr/bin/python3 "$here/codecs_instr.py" "$B"
else
  echo "bench: valgrind not installed: no instruction counts (scripts/install-deps.sh --test)"
fi
# filters and ZFPY against numcodecs/zfpy
/usr/bin/python3 "$here/filters.py" "$B"
# the sweep: overhead, speed against a numcodecs-per-combo reference, memory
/usr/bin/python3 "$here/sweep.py" "$B"
# dctk.sz / dctk.ebcc: the sweep's best ratio without and with them, and against ZFP
/usr/bin/python3 "$here/serializers.py" "$B"
# PCodec: the sweep's best ratio without and with it at several L1 thresholds, against zstd/blosc
/usr/bin/python3 "$here/pcodec.py" "$B" 300KB --compressor-class zstd
# compress_with_optimal against nccopy -d 1 -s
/usr/bin/python3 "$here/compress.py" "$B"
# selection: re-gating a full default sweep against the sweep, and the cost of the error metrics
/usr/bin/python3 "$here/selection.py" "$B" 20KB
