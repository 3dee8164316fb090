#!/bin/sh
# The main job on a real field from Debian's libncarg-data: the one-shot
# pipeline (sweep every field, write each with its best combo, merge).
#   scripts/demo.sh DC_TOOLKIT DATASET OUTDIR [extra compress flags]
set -eu
exe=$1 data=$2 out=$3
shift 3
if [ ! -f "$data" ]; then
  echo "demo: $data not found (is libncarg-data installed? run scripts/install-deps.sh)" >&2
  exit 1
fi
echo "== dc_toolkit inspect_dataset $data"
"$exe" inspect_dataset "$data"
echo
echo "== dc_toolkit compress $data --where-to-write $out $*"
"$exe" compress "$data" --where-to-write "$out" "$@"
