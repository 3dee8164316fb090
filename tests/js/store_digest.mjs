// zarrita (an independent Zarr v3 reader) opens a store through the
// consolidated metadata of its root group, as xarray and zarr-python users
// do, reads every array listed there in full, and prints one JSON object:
// {"listed": [names], "arrays": {name: {"sha256": digest of the C-order
// little-endian values} | {"error": message}}}. The Python tests compare the
// digests with those of the values they expect. With --published, the arrays
// are those whose folder at the top of the store has a zarr.json (hidden
// folders, a writer's stages, left out), for a store not merged yet.
//   node store_digest.mjs STORE [--published]
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";
import { toC } from "./c_order.mjs";


const result = { listed: [], arrays: {} };
try {
  const top = process.argv[2];
  let store;
  if (process.argv[3] === "--published") {
    store = new FileSystemStore(top);
    result.listed = fs.readdirSync(top).filter((n) => !n.startsWith(".") &&
      fs.existsSync(path.join(top, n, "zarr.json"))).sort();
  } else {
    store = await zarr.withConsolidatedMetadata(new FileSystemStore(top), { format: "v3" });
    result.listed = store.contents().filter((c) => c.kind === "array").map((c) => c.path.replace(/^\//, "")).sort();
  }
  for (const name of result.listed) {
    try {
      const arr = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
      const got = toC(await zarr.get(arr));
      const bytes = Buffer.from(got.buffer, got.byteOffset, got.byteLength);
      result.arrays[name] = { sha256: crypto.createHash("sha256").update(bytes).digest("hex") };
    } catch (e) {
      result.arrays[name] = { error: String(e && e.message ? e.message : e) };
    }
  }
} catch (e) {
  result.error = String(e && e.message ? e.message : e);
}
console.log(JSON.stringify(result));
