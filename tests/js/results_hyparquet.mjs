// hyparquet, a pure JavaScript reader, reads our results Parquet files: the
// footer says what DESIGN.md section 5 says, and the rows equal the CSV rows.
//   node results_hyparquet.mjs PATH/TO/dctk_results_tool
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { COLUMNS, FILES, assertSameRows, groupSizes, makeFiles, readCsvRows } from './results_common.mjs'

const PHYSICAL = { str: 'BYTE_ARRAY', i64: 'INT64', f64: 'DOUBLE', bool: 'BOOLEAN' }

function checkFooter (meta, name, nrows) {
  assert.equal(meta.version, 1)
  assert.equal(Number(meta.num_rows), nrows)
  assert.match(meta.created_by, /^dc_toolkit version /)
  const groups = groupSizes(name, nrows)
  assert.equal(meta.row_groups.length, groups.length)
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
  meta.row_groups.forEach((g, k) => {
    assert.equal(Number(g.num_rows), groups[k])
    assert.equal(g.ordinal, k)
    assert.equal(g.columns.length, COLUMNS.length)
    for (const c of g.columns) {
      assert.equal(c.meta_data.codec, 'UNCOMPRESSED')
      assert.equal(Number(c.meta_data.num_values), groups[k])
      assert.ok(c.meta_data.encodings.includes('PLAIN'))
    }
  })
}

const { dir, cleanup } = makeFiles()
try {
  for (const [name, nrows] of Object.entries(FILES)) {
    const file = await asyncBufferFromFile(join(dir, `${name}.parquet`))
    const meta = await parquetMetadataAsync(file)
    checkFooter(meta, name, nrows)
    const rows = await parquetReadObjects({ file, metadata: meta })
    const expected = readCsvRows(join(dir, `${name}.csv`))
    assert.equal(expected.length, nrows)
    assertSameRows(rows, expected, `hyparquet ${name}`)
  }
  console.log('hyparquet reads every results file: ok')
} finally {
  cleanup()
}
