// The readable pipeline name ("zstd(level=22) | bitround(keepbits=19) | -") checked
// against the codecs' Zarr v3 JSON it stands for, derived here independently of
// dc_toolkit's dctk_pipeline_name: three stages, compressor | filter | serializer,
// "-" for none; each codec by its short name with each integer, boolean or text
// setting as key=value.
import assert from 'node:assert/strict'

export function assertNameOf (name, texts) {
  const stages = name.split(' | ')
  assert.equal(stages.length, 3, `not "compressor | filter | serializer": ${name}`)
  texts.forEach((text, i) => {
    if (!text) return assert.equal(stages[i], '-', `stage ${i} of ${name} should be none`)
    const j = JSON.parse(text)
    for (const c of Array.isArray(j) ? j : [j]) {
      const conf = c.configuration || {}
      const short = c.name.startsWith('any-numcodecs.') ? conf.id : c.name.replace(/^numcodecs\./, '')
      assert.ok(stages[i].includes(`${short}(`), `${short} missing in stage ${i} of ${name}`)
      for (const [k, v] of Object.entries(conf)) {
        if (k === 'id' || k === '_version' || !(Number.isInteger(v) || typeof v === 'boolean' || typeof v === 'string')) continue
        assert.ok(stages[i].includes(`${k}=${v}`), `${k}=${v} of ${short} missing in ${name}`)
      }
    }
  })
}
