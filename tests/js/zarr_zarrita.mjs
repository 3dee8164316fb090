// zarrita (an independent Zarr v3 reader) reads the arrays our writer made:
// float32, float64, int16; 1 to 4 dims; shapes that chunks and shards do not
// divide; chunks left out because they are all fill value; sharded and not;
// every codec both zarrita and our registry have; consolidated metadata.
//   node zarr_zarrita.mjs PATH/TO/dctk_zarr_tool
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";
import { toC } from "./c_order.mjs";

const tool = process.argv[2];
// tmpfs when there is one: each array's metadata is fsync'ed, which is slow on a busy disk
const base = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
const dir = fs.mkdtempSync(path.join(base, "dctk_zarrita_"));
const ours = new Set(execFileSync(tool, ["codecs"]).toString().trim().split("\n"));
let failures = 0, checks = 0;

const CTOR = { float32: Float32Array, float64: Float64Array, int16: Int16Array };
const NP = { float32: "<f4", float64: "<f8", int16: "<i2" };
const SIZE = { float32: 4, float64: 8, int16: 2 };
const SHAPES = [[37], [11, 13], [5, 7, 9], [3, 4, 5, 6]];
const CHUNKS = [[4], [3, 4], [2, 3, 4], [2, 3, 2, 4]];
const SHARDS = [[12], [6, 8], [4, 6, 4], [2, 3, 4, 8]];

let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

// Smooth values with runs of the fill value, so whole inner chunks are skipped.
function makeData(dtype, n, fill) {
  const a = new CTOR[dtype](n);
  for (let i = 0; i < n; i++) {
    const isFill = i < n / 4 || Math.floor(i / 5) % 4 === 0;
    const v = dtype === "int16" ? Math.round(100 * Math.sin(i / 7)) + Math.floor(rand() * 5) : 280 + 10 * Math.sin(i / 9) + rand();
    a[i] = isFill ? fill : v;
  }
  return a;
}

function sameBits(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) && Number.isNaN(b[i])) continue;
    if (a[i] !== b[i]) return false;
  }
  return true;
}


function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

function codecLists(dtype, nd) {
  const es = SIZE[dtype];
  const bytes = { name: "bytes", configuration: { endian: "little" } };
  const lists = { plain: [bytes], big: [{ name: "bytes", configuration: { endian: "big" } }] };
  if (ours.has("crc32c")) lists.crc32c = [bytes, { name: "crc32c" }];
  if (ours.has("transpose"))
    lists.transpose = [{ name: "transpose", configuration: { order: [...Array(nd).keys()].reverse() } }, bytes];
  if (ours.has("blosc"))
    lists.blosc = [bytes, { name: "blosc", configuration: { cname: "lz4", clevel: 5, shuffle: "shuffle", typesize: es, blocksize: 0 } }];
  if (ours.has("zstd")) lists.zstd = [bytes, { name: "zstd", configuration: { level: 3, checksum: false } }];
  if (ours.has("gzip")) lists.gzip = [bytes, { name: "gzip", configuration: { level: 5 } }];
  if (ours.has("numcodecs.zlib")) lists.zlib = [bytes, { name: "numcodecs.zlib", configuration: { level: 5 } }];
  if (ours.has("numcodecs.lz4")) lists.lz4 = [bytes, { name: "numcodecs.lz4", configuration: { acceleration: 1 } }];
  if (ours.has("numcodecs.shuffle") && ours.has("zstd"))
    lists.shuffle_zstd = [bytes, { name: "numcodecs.shuffle", configuration: { elementsize: es } },
      { name: "zstd", configuration: { level: 1, checksum: false } }];
  if (ours.has("numcodecs.delta"))
    lists.delta = [{ name: "numcodecs.delta", configuration: { dtype: NP[dtype] } }, bytes];
  if (ours.has("numcodecs.bitround") && dtype !== "int16")
    lists.bitround = [{ name: "numcodecs.bitround", configuration: { keepbits: 10 } }, bytes];
  return lists;
}

async function readWithZarrita(storeDir, name) {
  const store = new FileSystemStore(storeDir);
  const arr = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
  return { arr, whole: await zarr.get(arr) };
}

// Write one array, read it with zarrita, and compare with the input (or, for
// lossy codecs, with what our own reader returns).
async function runCase(dtype, nd, sharded, codecName, codecs, idx) {
  const shape = SHAPES[nd - 1];
  const n = shape.reduce((a, b) => a * b, 1);
  const fill = dtype === "int16" ? -7 : NaN;
  const data = makeData(dtype, n, fill);
  const name = `a${idx}`;
  const raw = path.join(dir, `${name}.raw`);
  fs.writeFileSync(raw, Buffer.from(data.buffer));
  const args = ["write", path.join(dir, "s.zarr"), name, "--dtype", dtype, "--shape", shape.join(","),
    "--chunk", CHUNKS[nd - 1].join(","), "--fill", Number.isNaN(fill) ? "NaN" : String(fill),
    "--codecs", JSON.stringify(codecs), "--threads", "2"];
  if (sharded) args.push("--shard", SHARDS[nd - 1].join(","));
  execFileSync(tool, [...args, raw]);
  const what = `${dtype} ${nd}-d ${sharded ? "sharded" : "unsharded"} ${codecName}`;
  let expect = data;
  if (codecName === "bitround" || (codecName === "delta" && dtype !== "int16")) {
    const back = path.join(dir, `${name}.back`);
    execFileSync(tool, ["read", path.join(dir, "s.zarr"), name, back]);
    const b = fs.readFileSync(back);
    expect = new CTOR[dtype](b.buffer, b.byteOffset, n);
    if (codecName === "bitround") check(!sameBits(expect, data), `${what}: bitround changed nothing`);
  }
  const { arr, whole } = await readWithZarrita(path.join(dir, "s.zarr"), name);
  check(JSON.stringify(whole.shape) === JSON.stringify(shape), `${what}: shape ${whole.shape}`);
  check(sameBits(toC(whole), expect), `${what}: values differ`);
  // a region that straddles chunk and shard edges
  const sel = shape.map((s) => zarr.slice(Math.floor(s / 3), s - 1));
  const part = await zarr.get(arr, sel);
  const want = [];
  const idxs = shape.map((s) => [Math.floor(s / 3), s - 1]);
  const walk = (d, off) => {
    if (d === nd) return want.push(expect[off]);
    for (let i = idxs[d][0]; i < idxs[d][1]; i++) walk(d + 1, off * shape[d] + i);
  };
  walk(0, 0);
  check(sameBits(toC(part), want), `${what}: region values differ`);
}

let idx = 0;
for (const dtype of ["float32", "float64", "int16"]) {
  for (let nd = 1; nd <= 4; nd++) {
    for (const sharded of [true, false]) {
      const lists = codecLists(dtype, nd);
      // every codec on sharded 2-d arrays; fewer elsewhere, to keep the test short
      const few = sharded ? ["plain", "zstd"] : ["plain"];
      if (nd === 2 && !sharded) few.push("big", "zstd", "crc32c");
      for (const [codecName, codecs] of Object.entries(lists)) {
        if (!(nd === 2 && sharded) && !few.includes(codecName)) continue;
        await runCase(dtype, nd, sharded, codecName, codecs, idx++);
      }
    }
  }
}

// Consolidated metadata lists every array, and zarrita opens them through it.
execFileSync(tool, ["consolidate", path.join(dir, "s.zarr")]);
const cstore = await zarr.withConsolidatedMetadata(new FileSystemStore(path.join(dir, "s.zarr")), { format: "v3" });
const listed = cstore.contents().filter((c) => c.kind === "array").length;
check(listed === idx, `consolidated metadata lists ${listed} arrays, expected ${idx}`);
const viaCons = await zarr.open.v3(zarr.root(cstore).resolve("a0"), { kind: "array" });
check(JSON.stringify(viaCons.shape) === JSON.stringify(SHAPES[0]), "array opened through consolidated metadata");

fs.rmSync(dir, { recursive: true, force: true });
console.log(`zarrita: ${checks - failures}/${checks} checks passed over ${idx} arrays (codecs: ${[...ours].join(", ")})`);
process.exit(failures ? 1 : 0);
