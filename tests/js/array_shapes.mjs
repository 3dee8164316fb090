// zarrita opens a store through its root's consolidated metadata and prints,
// for every array listed there, {shape, dtype, attrs, n} where n is the
// number of values zarrita's full read returns, or get_error when the read
// fails (zarrita reads no array with a zero in its shape), or {error} when
// the array does not open.
//   node array_shapes.mjs STORE
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";

const out = {};
try {
  const store = await zarr.withConsolidatedMetadata(new FileSystemStore(process.argv[2]), { format: "v3" });
  for (const c of store.contents().filter((c) => c.kind === "array")) {
    const name = c.path.replace(/^\//, "");
    try {
      const arr = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
      out[name] = { shape: arr.shape, dtype: arr.dtype, attrs: arr.attrs };
      try {
        out[name].n = (await zarr.get(arr)).data.length;
      } catch (e) {
        out[name].get_error = String(e && e.message ? e.message : e);
      }
    } catch (e) {
      out[name] = { error: String(e && e.message ? e.message : e) };
    }
  }
} catch (e) {
  out.error = String(e && e.message ? e.message : e);
}
console.log(JSON.stringify(out));
