// A real sweep's results_VAR.parquet reads in DuckDB and in hyparquet with the
// same rows and values as its config_space_VAR_rank0.csv (doubles bit for bit).
//   node sweep_parquet.mjs PATH/TO/dc_toolkit NCARG_DATA_DIR
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { assertSameRows, readCsvRows } from './results_common.mjs'

const [exe, ncarg] = process.argv.slice(2)
const dir = mkdtempSync(join(tmpdir(), 'dctk-sweep-parquet-'))
const byCombo = rows => [...rows].sort((a, b) =>
  Number(a.comp_idx - b.comp_idx) || Number(a.filt_idx - b.filt_idx) || Number(a.ser_idx - b.ser_idx))
try {
  const r = spawnSync(exe, ['evaluate_combos', join(ncarg, 'cdf', 'meccatemp.cdf'), '--where-to-write', dir,
    '--field-to-compress', 't', '--compressor-class', 'lz4', '--eval-data-size-limit', '60KB',
    '--override-existing-l1-error', '1e-3'], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const csv = byCombo(readCsvRows(join(dir, 'config_space_t_rank0.csv')))
  assert.equal(csv.length, 6 * 12 * 39) // lz4 and its shuffled variant x 3, every filter and serializer (zfp, sz, ebcc, pcodec, zfp.rs)
  const parquet = join(dir, 'results_t.parquet')

  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  const duck = (await conn.runAndReadAll(`SELECT * FROM read_parquet('${parquet}')`)).getRowObjects()
  conn.closeSync()
  assertSameRows(byCombo(duck), csv, 'duckdb')
  assert.ok(duck.some(row => row.keep) && duck.some(row => !row.keep), 'kept and filtered rows both present')

  const hyp = await parquetReadObjects({ file: await asyncBufferFromFile(parquet) })
  assertSameRows(byCombo(hyp), csv, 'hyparquet')
  console.log(`a sweep's Parquet equals its CSV in DuckDB and hyparquet: ${csv.length} rows`)
  console.log('2 passed, 0 failed')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
