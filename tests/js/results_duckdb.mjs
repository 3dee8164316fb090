// DuckDB reads our results Parquet files: its view of the schema and footer is
// what DESIGN.md section 5 says, and the rows equal the CSV rows. DuckDB's own
// CSV reader also reads our CSV back to the same rows.
//   node results_duckdb.mjs PATH/TO/dctk_results_tool
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { COLUMNS, FILES, assertSameRows, groupSizes, makeFiles, readCsvRows } from './results_common.mjs'

const SQL_TYPE = { str: 'VARCHAR', i64: 'BIGINT', f64: 'DOUBLE', bool: 'BOOLEAN' }
const quote = s => `'${s.replaceAll("'", "''")}'`

async function rows (conn, sql) {
  return (await conn.runAndReadAll(sql)).getRowObjects()
}

async function checkSchema (conn, path, name, nrows) {
  const desc = await rows(conn, `DESCRIBE SELECT * FROM read_parquet(${quote(path)})`)
  assert.deepEqual(desc.map(d => [d.column_name, d.column_type]), COLUMNS.map(([n, k]) => [n, SQL_TYPE[k]]))
  const schema = await rows(conn, `SELECT name, repetition_type, converted_type, logical_type
                                   FROM parquet_schema(${quote(path)}) WHERE num_children IS NULL`)
  COLUMNS.forEach(([name, kind], k) => {
    assert.equal(schema[k].name, name)
    assert.equal(schema[k].repetition_type, 'REQUIRED', name)
    if (kind === 'str') {
      assert.equal(schema[k].converted_type, 'UTF8', name)
      assert.match(String(schema[k].logical_type), /String/i, name)
    }
  })
  const [file] = await rows(conn, `SELECT created_by, num_rows, num_row_groups, format_version
                                   FROM parquet_file_metadata(${quote(path)})`)
  assert.match(file.created_by, /^dc_toolkit version /)
  assert.equal(file.num_rows, BigInt(nrows))
  const groups = groupSizes(name, nrows)
  assert.equal(file.num_row_groups, BigInt(groups.length))
  assert.equal(file.format_version, 1n)
  const meta = await rows(conn, `SELECT row_group_id, num_values, compression, encodings
                                 FROM parquet_metadata(${quote(path)})`)
  assert.equal(meta.length, groups.length * COLUMNS.length)
  for (const m of meta) {
    assert.equal(m.num_values, BigInt(groups[Number(m.row_group_id)]))
    assert.equal(m.compression, 'UNCOMPRESSED')
    assert.match(m.encodings, /PLAIN/)
  }
}

// DuckDB parses the CSV itself; columns given so nothing is guessed.
async function duckdbCsvRows (conn, path) {
  const cols = COLUMNS.map(([n, k]) => `${quote(n)}: ${quote(SQL_TYPE[k])}`).join(', ')
  return rows(conn, `SELECT * FROM read_csv(${quote(path)}, header = true, delim = ',', quote = '"',
                     escape = '"', nullstr = '\\N', columns = {${cols}})`)
}

const { dir, cleanup } = makeFiles()
const instance = await DuckDBInstance.create(':memory:')
const conn = await instance.connect()
try {
  for (const [name, nrows] of Object.entries(FILES)) {
    const path = join(dir, `${name}.parquet`)
    await checkSchema(conn, path, name, nrows)
    const got = await rows(conn, `SELECT * FROM read_parquet(${quote(path)})`)
    const expected = readCsvRows(join(dir, `${name}.csv`))
    assert.equal(expected.length, nrows)
    assertSameRows(got, expected, `duckdb ${name}`)
    // awkward.csv holds invalid UTF-8 on purpose, which DuckDB's CSV reader rejects.
    if (name !== 'awkward') assertSameRows(await duckdbCsvRows(conn, join(dir, `${name}.csv`)), expected, `duckdb csv ${name}`)
  }
  console.log('DuckDB reads every results file: ok')
} finally {
  conn.closeSync()
  cleanup()
}
