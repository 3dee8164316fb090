#!/usr/bin/python3
"""Derive data/l1_error_thresholds.csv from data/variable_ranges.csv.

The method: a variable's threshold is the relative L1 error that 16-bit
linear packing (netCDF `short` with scale_factor, GRIB2 simple packing at
16 bits) introduces over the variable's physical range, an error climate
archives already accept. Packing [Min, Max] into 65535 steps rounds each
value by at most half a step, and on average by a quarter of one, so

    threshold = ((Max - Min) / 65535 / 4) / Typical abs

with Typical abs the mean magnitude of the variable. The same packing's
largest error, half a step, is the budget in the variable's own unit:

    Abs error = (Max - Min) / 65535 / 2

The ranges table gives
Min, Max and Typical abs per (short name, unit); a row of the threshold table
applies only when the units match the variable's `units` attribute.

    scripts/make_thresholds.py > data/l1_error_thresholds.csv
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "data", "variable_ranges.csv")

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["Short Name", "Unit", "Existing L1 error", "Abs error"])
with open(src, newline="") as f:
    for row in csv.DictReader(f):
        step = (float(row["Max"]) - float(row["Min"])) / 65535.0
        threshold = step / 4.0 / float(row["Typical abs"])
        out.writerow([row["Short Name"], row["Unit"], "%.3g" % threshold, "%.3g" % (step / 2.0)])
