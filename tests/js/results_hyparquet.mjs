// hyparquet, a pure JavaScript reader, reads our results Parquet files: the
// footer says what DESIGN.md section 5 says, and the rows equal the CSV rows.
//   node results_hyparquet.mjs PATH/TO/dctk_results_tool
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { COLUMNS, FILES, assertSameRows, makeFiles, readCsvRows } from './results_common.mjs'

const PHYSICAL = { str: 'BYTE_ARRAY', i64: 'INT64', f64: 'DOUBLE', bool: 'BOOLEAN' }

function checkFooter (meta, nrows) {
  assert.equal(meta.version, 1)
  assert.equal(Number(meta.num_rows), nrows)
  assert.match(meta.created_by, /^dc_toolkit version /)
  assert.equal(meta.row_groups.length, nrows > 0 ? 1 : 0)
  const [root, ...leaves] = meta.schema
  assert.equal(root.num_children, COLUMNS.length)
  assert.deepEqual(leaves.map(s => s.name), COLUMNS.map(c => c[0]))
  COLUMNS.forEach(([name, kind], k) => {
    assert.equal(leaves[k].type, PHYSICAL[kind], name)
    assert.equal(leaves[k].repetition_type, 'REQUIRED', name)
    if (kind === 'str') {
      assert.equal(leaves[k].converted_type, 'UTF8', name)
      assert.equal(leaves[k].logical_type?.type, 'STRING', name)
    }
  })
  if (nrows === 0) return
  const cols = meta.row_groups[0].columns
  assert.equal(cols.length, COLUMNS.length)
  for (const c of cols) {
    assert.equal(c.meta_data.codec, 'UNCOMPRESSED')
    assert.equal(Number(c.meta_data.num_values), nrows)
    assert.ok(c.meta_data.encodings.includes('PLAIN'))
  }
}

const { dir, cleanup } = makeFiles()
try {
  for (const [name, nrows] of Object.entries(FILES)) {
    const file = await asyncBufferFromFile(join(dir, `${name}.parquet`))
    const meta = await parquetMetadataAsync(file)
    checkFooter(meta, nrows)
    const rows = await parquetReadObjects({ file, metadata: meta })
    const expected = readCsvRows(join(dir, `${name}.csv`))
    assert.equal(expected.length, nrows)
    assertSameRows(rows, expected, `hyparquet ${name}`)
  }
  console.log('hyparquet reads every results file: ok')
} finally {
  cleanup()
}
