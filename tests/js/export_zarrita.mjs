// zarrita (an independent Zarr v3 reader) opens the stores that our own
// commands built from real libncarg-data files (export_store.py), through
// their consolidated metadata, and every field equals what python3-netCDF4
// reads from the input: exactly for the lossless fields, within the bitround
// bound and the sweep's L1 threshold for the lossy one.
//   node export_zarrita.mjs FIXTURE_DIR
import * as fs from "node:fs";
import * as path from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";
import { toC } from "./c_order.mjs";

const fix = process.argv[2];
const manifest = JSON.parse(fs.readFileSync(path.join(fix, "manifest.json"), "utf8"));
let checks = 0, failures = 0;

function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
  return ok;
}

const CTOR = { "<f4": Float32Array, "<f8": Float64Array, "<i4": Int32Array, "<i2": Int16Array };

function reference(info) {
  const b = fs.readFileSync(path.join(fix, info.file));
  const C = CTOR[info.dtype];
  return new C(b.buffer, b.byteOffset, b.length / C.BYTES_PER_ELEMENT);
}


function compareExact(got, want, what) {
  let bad = 0, first = -1;
  for (let i = 0; i < want.length; i++) {
    const same = Number.isNaN(want[i]) ? Number.isNaN(got[i]) : got[i] === want[i];
    if (!same && bad++ === 0) first = i;
  }
  check(bad === 0, `${what}: ${bad} values differ (first at ${first}: ${got[first]} vs ${want[first]})`);
}

// Each value within half the last kept mantissa bit; masks kept; L1 within the threshold.
function compareLossy(got, want, info, what) {
  const rel = 2 ** -(info.keepbits + 1);
  let over = 0, masks = 0, sumErr = 0, sumAbs = 0, changed = 0;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i]) || Number.isNaN(got[i])) {
      masks += Number.isNaN(want[i]) !== Number.isNaN(got[i]);
      continue;
    }
    const e = Math.abs(got[i] - want[i]);
    if (e > Math.abs(want[i]) * rel) over++;
    changed += e > 0;
    sumErr += e;
    sumAbs += Math.abs(want[i]);
  }
  const l1 = sumErr / sumAbs;
  check(over === 0, `${what}: ${over} values beyond the bitround bound 2^-${info.keepbits + 1}`);
  check(masks === 0, `${what}: ${masks} missing values lost or invented`);
  check(l1 <= info.l1_bound, `${what}: relative L1 ${l1} > threshold ${info.l1_bound}`);
  check(changed > 0, `${what}: a lossy pipeline changed nothing`);
  console.log(`${what}: relative L1 ${l1.toExponential(3)} (threshold ${info.l1_bound}), keepbits ${info.keepbits}`);
}

async function checkStore(key, m) {
  const store = await zarr.withConsolidatedMetadata(new FileSystemStore(m.store), { format: "v3" });
  const listed = store.contents().filter((c) => c.kind === "array").map((c) => c.path.replace(/^\//, "")).sort();
  check(JSON.stringify(listed) === JSON.stringify(Object.keys(m.vars).sort()),
    `${key}: arrays ${listed} vs input variables ${Object.keys(m.vars).sort()}`);
  for (const [name, info] of Object.entries(m.vars)) {
    const what = `${key}/${name}`;
    const arr = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
    check(JSON.stringify(arr.shape) === JSON.stringify(info.shape), `${what}: shape ${arr.shape} vs ${info.shape}`);
    const dims = arr.dimensionNames ?? (await rawMeta(m.store, name)).dimension_names;
    check(JSON.stringify(dims) === JSON.stringify(info.dims), `${what}: dimension names ${dims} vs ${info.dims}`);
    const got = toC(await zarr.get(arr));
    const want = reference(info);
    if (!check(got.length === want.length, `${what}: ${got.length} values, want ${want.length}`)) continue;
    if (info.lossy) compareLossy(got, want, info, what);
    else compareExact(got, want, what);
  }
}

async function rawMeta(store, name) {
  return JSON.parse(fs.readFileSync(path.join(store, name, "zarr.json"), "utf8"));
}

for (const [key, m] of Object.entries(manifest.stores)) await checkStore(key, m);
console.log(`export zarrita: ${checks - failures}/${checks} checks passed`);
process.exit(failures || !checks ? 1 : 0);
