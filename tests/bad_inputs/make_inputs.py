#!/usr/bin/python3
"""Writes the damaged inputs of tests/bad_inputs (committed; run again only to
change them). cases.tsv says what each must give.

    DCTK_ZARR_TOOL=build/tests/dctk_zarr_tool /usr/bin/python3 tests/bad_inputs/make_inputs.py

netCDF and GRIB: cut-down or damaged copies of ncarg/data files (and of the
netCDF-4 seed of the dataset_open fuzz corpus). Zarr: a good store written by
dctk_zarr_tool (7 x 10 float32, one shard of 2 x 3 zstd inner chunks), then
one copy per hostile zarr.json or damaged shard."""
import json
import math
import os
import shutil
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TOOL = os.environ["DCTK_ZARR_TOOL"]


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def flip(data, at, mask):
    b = bytearray(data)
    b[at] ^= mask
    return bytes(b)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# --- netCDF --------------------------------------------------------------
cdf = open(os.path.join(NCARG, "cdf/cn10n.cdf"), "rb").read()
put("nc_empty.nc", b"")
put("nc_truncated_header.nc", cdf[:100])
put("nc_truncated_data.nc", cdf[: len(cdf) * 2 // 3])
put("nc_bitflip_version.nc", flip(cdf, 3, 0x08))  # CDF\x01 -> CDF\x09
# the first dimension's length (after magic, numrecs, NC_DIMENSION tag, count, name): huge
put("nc_bitflip_dimlen.nc", flip(cdf, cdf.index(b"xdim") + 4, 0x40))
nc4 = open(os.path.join(HERE, "../fuzz/corpus/dataset_open/seed_netcdf4.nc"), "rb").read()[1:]
put("nc4_truncated.nc", nc4[: len(nc4) // 2])
put("nc4_bitflip_superblock.nc", flip(nc4, 8, 0xFF))  # superblock version 0 -> 255

# --- GRIB ----------------------------------------------------------------
g2 = open(os.path.join(HERE, "../fuzz/corpus/dataset_open/seed_wafsgfs_L_t06z_intdsk60.grib2"), "rb").read()[1:]
put("grib_empty.grib2", b"")
put("grib_truncated.grib2", g2[: len(g2) // 2])
put("grib_bitflip_length.grib2", flip(g2, 12, 0x10))  # total length in section 0 beyond the file
put("grib_no_end.grib2", g2[:-4])  # no closing 7777
# found by fuzz_dataset_open: 838866845 points on a 93 x 65 grid (used to allocate 6.7 GB)
put("grib_points_mismatch.grib2",
    open(os.path.join(HERE, "../fuzz/corpus/dataset_open/crash_grib2_points_mismatch"), "rb").read()[1:])
# found by fuzz_dataset_open: a JPEG 2000 image of 524381 x 65 for 6045 values (eccodes wrote past our array)
put("grib_jpeg_image_size.grib2",
    open(os.path.join(HERE, "../fuzz/corpus/dataset_open/crash_grib2_jpeg_image_size"), "rb").read()[1:])
put("grib_tiny_length.grib2", g2[:8] + struct.pack(">Q", 12) + g2[16:])  # eccodes copied 16 bytes into 12
put("grib_huge_length.grib2", flip(g2, 9, 0xFF))  # claims 2^56 bytes: eccodes would try to allocate them

# --- Zarr ----------------------------------------------------------------
tmp = tempfile.mkdtemp()
raw = os.path.join(tmp, "f.raw")
with open(raw, "wb") as f:
    f.write(struct.pack("<70f", *[250 + 10 * math.sin(i * 0.3) for i in range(70)]))
good = os.path.join(tmp, "good.zarr")
codecs = '[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]'
subprocess.run([TOOL, "write", good, "t", "--dtype", "float32", "--shape", "7,10", "--chunk", "4,4", "--shard", "8,12",
                "--dims", "lat,lon", "--codecs", codecs, raw], check=True)
meta = json.load(open(os.path.join(good, "t/zarr.json")))
shard = open(os.path.join(good, "t/c/0/0"), "rb").read()
NIDX = 6


def store(name, doc=meta, text=None, shard_bytes=shard):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(good, d)
    with open(os.path.join(d, "t/zarr.json"), "w") as f:
        f.write(text if text is not None else json.dumps(doc, indent=2))
    with open(os.path.join(d, "t/c/0/0"), "wb") as f:
        f.write(shard_bytes)


def with_(path, value):
    doc = json.loads(json.dumps(meta))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def sharding(key, value):
    doc = json.loads(json.dumps(meta))
    doc["codecs"][0]["configuration"][key] = value
    return doc


store("zarr_empty_json.zarr", text="")
store("zarr_truncated_json.zarr", text=json.dumps(meta)[:200])
store("zarr_bitflip_json.zarr", text=json.dumps(meta).replace('"shape"', '"shapf"'))
store("zarr_shape_string.zarr", with_(["shape"], "7,10"))
store("zarr_dtype_number.zarr", with_(["data_type"], 32))
store("zarr_dtype_unknown.zarr", with_(["data_type"], "complex64"))
store("zarr_shape_1e30.zarr", with_(["shape"], [1e30, 10]))
store("zarr_shape_2e62.zarr", with_(["shape"], [2**31, 2**31]))
store("zarr_shape_2e64.zarr", with_(["shape"], [2**64, 10]))
store("zarr_shape_negative.zarr", with_(["shape"], [-7, 10]))
store("zarr_unknown_codec.zarr", sharding("codecs", [{"name": "bytes", "configuration": {"endian": "little"}},
                                                      {"name": "snappy", "configuration": {}}]))
store("zarr_nan_token.zarr", text=json.dumps(meta).replace('"fill_value": 0.0', '"fill_value": NaN'))
store("zarr_chunk_negative.zarr", with_(["chunk_grid", "configuration", "chunk_shape"], [-8, 12]))
store("zarr_chunk_zero.zarr", with_(["chunk_grid", "configuration", "chunk_shape"], [0, 12]))
store("zarr_inner_zero.zarr", sharding("chunk_shape", [0, 4]))
store("zarr_inner_not_divisor.zarr", sharding("chunk_shape", [3, 5]))
store("zarr_dims_length.zarr", with_(["dimension_names"], ["lat", "lon", "time"]))
store("zarr_fill_string.zarr", with_(["fill_value"], "warm"))
store("zarr_codecs_object.zarr", with_(["codecs"], {"name": "bytes"}))
store("zarr_huge_chunk.zarr", dict(with_(["shape"], [2**40, 10]), chunk_grid={
    "name": "regular", "configuration": {"chunk_shape": [2**40, 12]}}))
# issue 37, finding 6: 400 bytes that describe 2^40 one-value chunks (readers used to stat every key)
store("zarr_grid_2e40.zarr", dict(meta, shape=[2**40], dimension_names=["time"], chunk_grid={
    "name": "regular", "configuration": {"chunk_shape": [1]}},
    codecs=[{"name": "bytes", "configuration": {"endian": "little"}}]))

# shards: the index is the last 6 x 16 + 4 bytes
body, index = shard[: -(NIDX * 16 + 4)], bytearray(shard[-(NIDX * 16 + 4):-4])


def reindexed(entry, offset=None, length=None):
    idx = bytearray(index)
    off, ln = struct.unpack_from("<QQ", idx, 16 * entry)
    struct.pack_into("<QQ", idx, 16 * entry, off if offset is None else offset, ln if length is None else length)
    return body + bytes(idx) + struct.pack("<I", crc32c(bytes(idx)))


store("shard_offset_beyond.zarr", shard_bytes=reindexed(0, offset=100000))
store("shard_length_beyond.zarr", shard_bytes=reindexed(0, length=1 << 40))
store("shard_offset_overflow.zarr", shard_bytes=reindexed(1, offset=2**64 - 2, length=8))
store("shard_crc_mismatch.zarr", shard_bytes=flip(shard, len(shard) - 4 - 16 * NIDX, 0x01))
store("shard_truncated.zarr", shard_bytes=shard[:50])
store("shard_empty.zarr", shard_bytes=b"")
store("shard_chunk_bitflip.zarr", shard_bytes=flip(shard, 5, 0xFF))
shutil.rmtree(tmp)
