#!/bin/sh
# The main job on a real field from Debian's libncarg-data.
#   scripts/demo.sh DC_TOOLKIT DATASET OUTDIR
set -eu
exe=$1 data=$2 out=$3
if [ ! -f "$data" ]; then
  echo "demo: $data not found (is libncarg-data installed? run scripts/install-deps.sh)" >&2
  exit 1
fi
echo "== dc_toolkit inspect_dataset $data"
"$exe" inspect_dataset "$data"
