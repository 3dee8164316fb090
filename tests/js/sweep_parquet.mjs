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
  // lz4 and its shuffled variant x 3, every filter and serializer of the grid (11 filters; zfp, sz, ebcc, pcodec,
  // zfp.rs: 38 serializers; each with none), and the members solved for the budget after the grid's (issue 31 item 1)
  const GRID_F = 12; const GRID_S = 39
  const past = (key, grid) => [...new Set(csv.map(r => Number(r[key])).filter(i => i >= grid - 1))].sort((a, b) => a - b)
  const solvedF = past('filt_idx', GRID_F); const solvedS = past('ser_idx', GRID_S)
  assert.deepEqual(solvedF, solvedF.map((_, k) => GRID_F - 1 + k), 'solved filters follow the grid')
  assert.deepEqual(solvedS, solvedS.map((_, k) => GRID_S - 1 + k), 'solved serializers follow the grid')
  assert.ok(solvedF.length + solvedS.length > 0, 'members solved for 1e-3')
  for (const row of csv) {
    if (solvedF.includes(Number(row.filt_idx)) || solvedS.includes(Number(row.ser_idx))) {
      assert.ok(Number.isFinite(row.solved) && row.trials > 0n, `solved member's row ${row.filter} ${row.serializer}`)
    }
  }
  assert.equal(csv.length, 6 * (GRID_F + solvedF.length) * (GRID_S + solvedS.length))
  const parquet = join(dir, 'results_t.parquet')

  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  const duck = (await conn.runAndReadAll(`SELECT * FROM read_parquet('${parquet}')`)).getRowObjects()
  conn.closeSync()
  assertSameRows(byCombo(duck), csv, 'duckdb')
  assert.ok(duck.some(row => row.keep) && duck.some(row => !row.keep), 'kept and filtered rows both present')

  // each row's reader level, from the codec names alone (the levels of issue 20)
  const CORE = new Set(['bytes', 'transpose', 'gzip', 'zstd', 'blosc', 'crc32c'])
  const level = row => {
    const names = [row.filter, row.serializer, row.compressor].filter(Boolean)
      .flatMap(t => [JSON.parse(t)].flat()).map(c => c.name)
    if (row.serializer === '') names.push('bytes')
    if (names.some(n => n.startsWith('dctk.'))) return 'dctk'
    if (names.some(n => n.startsWith('any-numcodecs.'))) return 'plugin'
    return names.every(n => CORE.has(n)) ? 'core' : 'numcodecs'
  }
  for (const row of csv) assert.equal(row.portability, level(row), `${row.comp_idx} ${row.filt_idx} ${row.ser_idx}`)
  assert.ok(new Set(csv.map(r => r.portability)).size >= 3, 'several levels in one sweep')

  const hyp = await parquetReadObjects({ file: await asyncBufferFromFile(parquet) })
  assertSameRows(byCombo(hyp), csv, 'hyparquet')
  console.log(`a sweep's Parquet equals its CSV in DuckDB and hyparquet: ${csv.length} rows`)
  console.log('2 passed, 0 failed')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
