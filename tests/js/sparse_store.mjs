// zarrita writes a sparse Zarr v3 store for test_zarr_sparse_export.py: one
// float32 array x (codec bytes, little endian), of which only the regions the
// spec lists are written; every other chunk is never created, so it reads as
// the fill value.
//   node sparse_store.mjs STORE SPEC.json
// SPEC: {"shape": [...], "chunks": [...], "fill": F, "dims": [...],
//        "writes": [{"start": [...], "shape": [...], "values": "FILE.f32"}]}
// (values: raw little-endian float32 in C order, shape "shape")
import * as fs from "node:fs";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";

const [storePath, specPath] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(specPath, "utf8"));
const store = new FileSystemStore(storePath);
const root = await zarr.create(store);
const arr = await zarr.create(root.resolve("x"), {
  shape: spec.shape, chunkShape: spec.chunks, dtype: "float32", fillValue: spec.fill,
  codecs: [{ name: "bytes", configuration: { endian: "little" } }], dimensionNames: spec.dims,
});
for (const w of spec.writes) {
  const b = fs.readFileSync(w.values);
  const data = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const stride = w.shape.map((_, d) => w.shape.slice(d + 1).reduce((a, n) => a * n, 1));
  await zarr.set(arr, w.start.map((s, d) => zarr.slice(s, s + w.shape[d])), { data, shape: w.shape, stride });
}
console.log(`zarrita wrote ${spec.writes.length} regions of ${spec.shape} in chunks of ${spec.chunks}`);
