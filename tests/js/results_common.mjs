// Shared by the results Parquet tests: run dctk_results_tool, read its CSV
// files with an RFC 4180 parser written here (independent of our C reader),
// and compare rows value for value.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import assert from 'node:assert/strict'

export const COLUMNS = [
  ['var', 'str'], ['comp_idx', 'i64'], ['filt_idx', 'i64'], ['ser_idx', 'i64'],
  ['compressor', 'str'], ['filter', 'str'], ['serializer', 'str'], ['name', 'str'],
  ['ratio', 'f64'], ['l1_rel', 'f64'], ['l2_rel', 'f64'], ['linf_rel', 'f64'],
  ['euclidean', 'f64'], ['max_abs_err', 'f64'], ['encode_mbps', 'f64'], ['decode_mbps', 'f64'],
  ['bias_rel', 'f64'], ['pearson', 'f64'], ['psnr_db', 'f64'], ['ssim', 'f64'], ['rel_err_frac', 'f64'],
  ['extremes_rel', 'f64'], ['gradient_rel', 'f64'],
  ['pass_l1', 'bool'], ['pass_l2', 'bool'], ['pass_linf', 'bool'], ['pass_bias', 'bool'],
  ['pass_phys', 'bool'], ['pass_extremes', 'bool'], ['pass_gradient', 'bool'], ['pass_abs', 'bool'],
  ['portability', 'str'], ['keep', 'bool'], ['error', 'str'], ['fraction', 'f64'], ['status', 'str'],
  ['information', 'f64'],
  ['solved', 'f64'], ['trials', 'i64'],
  ['max_rel_err', 'f64'], ['mean_abs_err', 'f64'], ['pass_rel', 'bool'], ['pass_mean_abs', 'bool'],
  ['mean_rel_err', 'f64'], ['pass_mean_rel', 'bool'],
]
export const FILES = { awkward: 7, many: 5000, empty: 0 }
// Rows per row group: dctk_parquet_write's 4096, and 1500 for "many" (the tool
// asks for that so readers must join groups as well as pages).
export function groupSizes (name, nrows) {
  const per = name === 'many' ? 1500 : 4096
  const sizes = []
  for (let k = 0; k < nrows; k += per) sizes.push(Math.min(per, nrows - k))
  return sizes
}

// Runs the tool into a fresh folder; returns the folder and a cleanup function.
export function makeFiles () {
  const tool = process.argv[2]
  assert.ok(tool, 'usage: node test.mjs PATH/TO/dctk_results_tool')
  const dir = mkdtempSync(join(tmpdir(), 'dctk-results-'))
  const r = spawnSync(tool, [dir], { encoding: 'utf8' })
  assert.equal(r.status, 0, `dctk_results_tool failed: ${r.stderr}`)
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

// RFC 4180 records: quoted fields may hold commas, quotes ("") and newlines.
export function parseCsv (text) {
  const records = []
  let fields = []; let field = ''; let i = 0
  while (i < text.length) {
    if (text[i] === '"') {
      i++
      for (;;) {
        const q = text.indexOf('"', i)
        assert.ok(q >= 0, 'unterminated quoted field')
        field += text.slice(i, q)
        i = q + 1
        if (text[i] !== '"') break
        field += '"'; i++
      }
    } else {
      while (i < text.length && !',\r\n'.includes(text[i])) field += text[i++]
    }
    fields.push(field); field = ''
    if (text[i] === ',') { i++; continue }
    if (text[i] === '\r') i++
    assert.equal(text[i], '\n', `record ${records.length} does not end with a newline`)
    i++
    records.push(fields); fields = []
  }
  return records
}

function csvValue (kind, s) {
  if (kind === 'str') return s
  if (kind === 'i64') return BigInt(s)
  if (kind === 'bool') { assert.ok(s === 'true' || s === 'false', s); return s === 'true' }
  const special = { nan: NaN, inf: Infinity, '-inf': -Infinity }
  if (s in special) return special[s]
  const v = Number(s)
  assert.ok(!Number.isNaN(v), `not a number: '${s}'`)
  return v
}

// Rows of a results CSV as objects; strings decoded leniently (U+FFFD for bad bytes).
export function readCsvRows (path) {
  const text = new TextDecoder('utf-8').decode(readFileSync(path))
  const [header, ...records] = parseCsv(text)
  assert.deepEqual(header, COLUMNS.map(c => c[0]))
  return records.map(rec => {
    assert.equal(rec.length, COLUMNS.length)
    return Object.fromEntries(COLUMNS.map(([name, kind], k) => [name, csvValue(kind, rec[k])]))
  })
}

// Same rows, same values: doubles bit for bit up to NaN payloads (-0 is not 0).
export function assertSameRows (actual, expected, label) {
  assert.equal(actual.length, expected.length, `${label}: row count`)
  for (let i = 0; i < expected.length; i++) {
    for (const [name, kind] of COLUMNS) {
      const a = actual[i][name]; const e = expected[i][name]
      const where = `${label}: row ${i}, column ${name}`
      if (kind === 'i64') assert.equal(typeof a, 'bigint', where)
      if (kind === 'f64') assert.ok(Object.is(a, e), `${where}: ${a} != ${e}`)
      else assert.equal(a, e, where)
    }
  }
}
