"""Write tests/golden/pcodec/: streams from a reference pco build (the pco
crate of the pcodec repository, 1.0.3, built offline with a tiny driver that
calls pco::standalone::simple_compress with a ChunkConfig; nothing of it is
committed) and the values they hold. Each case is chosen to take one decoder
path: every mode (Classic, FloatMult, FloatQuant, IntMult, Dict), every delta
encoding (none, consecutive, lookback, conv1), several chunks, an empty
stream. The test (tests/unit/test_pcodec.c) checks that our decoder gives the
values bit for bit, and that the stream uses the mode and delta named here.

    PCOREF=/path/to/pcoref /usr/bin/python3 tests/interop/make_golden_pcodec.py

pcoref compress DTYPE LEVEL DELTA IN OUT, with env PCO_MODE and PCO_PAGE;
DELTA is none, cK, lookback or convK."""
import json
import os
import subprocess
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "pcodec")
REF = os.environ["PCOREF"]
rng = np.random.default_rng(11)
t = np.arange(700)

CASES = [
    # name, values, level, delta, mode spec, page size, expected (mode, delta) of the first chunk
    ("f32_floatmult", (np.round(rng.normal(size=700) * 300) / 10).astype(np.float32), 8, "c1", "fmult:0.1", 0, (2, 1)),
    ("f64_floatquant", rng.normal(size=700).astype(np.float32).astype(np.float64), 8, "none", "fquant:29", 0, (3, 0)),
    ("i32_intmult", (rng.integers(-500, 500, size=700) * 7 + 3).astype(np.int32), 8, "none", "imult:7", 0, (1, 0)),
    ("i16_dict", rng.choice(np.array([-3000, 17, 250, 9999], dtype=np.int16), size=700), 8, "none", "dict", 0, (4, 0)),
    ("i64_lookback", np.tile(rng.integers(-2**40, 2**40, size=50), 14).astype(np.int64), 8, "lookback", "classic", 0, (0, 2)),
    ("u16_conv1", (30000 + 20000 * np.sin(t / 40) + rng.integers(0, 30, size=700)).astype(np.uint16), 8, "conv2", "classic", 0, (0, 3)),
    ("u32_consec3_pages", (np.cumsum(np.cumsum(rng.integers(0, 9, size=700)))).astype(np.uint32), 12, "c3", "classic", 300, (0, 1)),
    ("f64_classic_special", np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -5e-324, 1e308] * 40), 0, "none", "classic", 0, (0, 0)),
    ("u64_classic", rng.integers(0, 2**64 - 1, size=300, dtype=np.uint64), 4, "c1", "classic", 0, (0, 0)),  # "try": random bits keep no delta
    ("f32_empty", np.zeros(0, dtype=np.float32), 8, "none", "classic", 0, None),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, values, level, delta, mode, page, expect in CASES:
            raw = os.path.join(tmp, "in.raw")
            values.tofile(raw)
            env = dict(os.environ, PCO_MODE=mode)
            if page:
                env["PCO_PAGE"] = str(page)
            enc = os.path.join(OUT, name + ".pco")
            subprocess.run([REF, "compress", str(values.dtype), str(level), delta, raw, enc], check=True, env=env)
            values.tofile(os.path.join(OUT, name + ".raw"))
            manifest.append({"name": name, "dtype": str(values.dtype), "n": int(values.size),
                             "mode": expect[0] if expect else None, "delta": expect[1] if expect else None})
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
