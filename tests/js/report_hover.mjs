// The analyze_clustering page in headless Chromium: a narrowed real sweep,
// then the page opened from file:// with every non-file request refused.
// Hovering isolated points must show their own combo (its readable name,
// checked against its codec JSON, and its indices) and no raw JSON; moving
// away hides the tooltip; the Pareto table names the pipelines and the
// winner; the page loads nothing from the network and logs no errors.
// Twin rows (one pipeline under several comp_idx of a stage, as hyparquet
// reads results_t.parquet: the same filt_idx, ser_idx and compressor JSON)
// are one candidate: hovering their point and the table show the lowest
// comp_idx of the group, never another (issue 33).
//   node report_hover.mjs [SCREENSHOT_DIR]   (a screenshot, the winner hovered, as report-html.png)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import assert from 'node:assert/strict'
import { chromium } from 'playwright-core'
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { assertNameOf } from './pipeline_name.mjs'

// the page's text of a name (fixedscaleoffset(astype=<i2, ...) holds a '<')
const htmlEscaped = t => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const dctk = process.env.DCTK
const data = `${process.env.DCTK_NCARG}/cdf/meccatemp.cdf`
const dir = mkdtempSync(join(tmpdir(), 'dctk-report-'))
const shots = process.argv[2]

// The results as hyparquet reads them: per pipeline (filt_idx, ser_idx, compressor JSON), its comp_idx values.
async function twinGroups (parquet) {
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(parquet) })
  const groups = new Map()
  for (const r of rows) {
    const key = `${Number(r.filt_idx)} ${Number(r.ser_idx)} ${r.compressor}`
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(Number(r.comp_idx))
  }
  const keyOf = new Map(rows.map(r => [`${Number(r.comp_idx)} ${Number(r.filt_idx)} ${Number(r.ser_idx)}`,
    `${Number(r.filt_idx)} ${Number(r.ser_idx)} ${r.compressor}`]))
  return { groups, keyOf, lowest: key => Math.min(...groups.get(key)) }
}

function run (args) {
  const r = spawnSync(dctk, args, { encoding: 'utf8' })
  assert.equal(r.status, 0, `dc_toolkit ${args[0]} failed: ${r.stderr}`)
}

// Points of one panel with no other point within 3 figure points, so the hover is unambiguous
// (the mouse lands within a fraction of a point of where we aim).
function isolated (pts, max) {
  const out = []
  for (const q of pts) {
    if (pts.every(o => o === q || (o[0] - q[0]) ** 2 + (o[1] - q[1]) ** 2 > 9)) out.push(q)
    if (out.length === max) break
  }
  return out
}

async function main () {
  // the plain serializer only: ~100 points a panel, enough of them isolated whatever sample the sweep
  // takes (with zfp's 2,880 points the isolated ones were a handful, and the sampler of issue 18 left one)
  run(['evaluate_combos', data, '--where-to-write', dir, '--field-to-compress', 't', '--compressor-class', 'zstd',
    '--serializer-class', 'none', '--override-existing-l1-error', '1e-3', '--threads-per-rank', '2',
    '--eval-data-size-limit', '100KB'])
  run(['analyze_clustering', '--where-to-write', dir, '--var', 't'])
  // a fresh profile in the test folder; playwright passes it as --user-data-dir
  const browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  try {
    const page = await browser.newPage()
    const offline = []; const errors = []
    await page.route('**/*', route => {
      if (route.request().url().startsWith('file:')) return route.continue()
      offline.push(route.request().url())
      return route.abort()
    })
    page.on('pageerror', e => errors.push(String(e)))
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()) })
    await page.goto(`file://${dir}/analyze_clustering_t.html`)
    const d = await page.evaluate(() => JSON.parse(document.getElementById('dctk-data').textContent))
    assert.equal(d.panels.length, 3)
    const box = await page.locator('#fig svg').boundingBox()
    const s = box.width / d.w
    let checked = 0
    for (const p of d.panels) {
      for (const q of isolated(p.pts, 4)) {
        const r = d.rows[q[2]]
        await page.mouse.move(box.x + q[0] * s, box.y + q[1] * s)
        const tip = page.locator('#tip')
        await tip.waitFor({ state: 'visible', timeout: 2000 })
        const text = await tip.textContent()
        assert.ok(text.startsWith(r[12]), `tooltip does not lead with the pipeline's name: ${text}`)
        assertNameOf(r[12], [r[3], r[4], r[5]])
        assert.ok(text.includes(`indices ${r[0]} ${r[1]} ${r[2]} for compress_with_optimal`), `tooltip: ${text}`)
        assert.ok(!text.includes('{"') && !text.includes('comp_idx'), `raw JSON or index names in the tooltip: ${text}`)
        checked++
      }
    }
    assert.ok(checked >= 6, `only ${checked} isolated points hovered`)
    // twins: their points coincide; hovering the place shows the group's lowest comp_idx
    const tw = await twinGroups(join(dir, 'results_t.parquet'))
    const key = r => `${r[1]} ${r[2]} ${r[3]}` // filt_idx ser_idx compressor of a page row
    const twinKeys = [...tw.groups].filter(([, cs]) => cs.length > 1).map(([k]) => k)
    assert.ok(twinKeys.length > 0, 'the sweep has no twin rows: nothing to check')
    let twinsHovered = 0
    for (const p of d.panels) {
      for (const q of p.pts) {
        const k = key(d.rows[q[2]])
        if (!twinKeys.includes(k)) continue
        // every point within 3 figure points is of the same pipeline, so whichever the page picks is a twin
        if (!p.pts.every(o => key(d.rows[o[2]]) === k || (o[0] - q[0]) ** 2 + (o[1] - q[1]) ** 2 > 9)) continue
        await page.mouse.move(box.x + 3, box.y + 3)
        await page.mouse.move(box.x + q[0] * s, box.y + q[1] * s)
        const tip = page.locator('#tip')
        await tip.waitFor({ state: 'visible', timeout: 2000 })
        const text = await tip.textContent()
        const [f, sr] = k.split(' ')
        assert.ok(text.includes(`indices ${tw.lowest(k)} ${f} ${sr} for compress_with_optimal`),
          `a twin of comp_idx ${tw.groups.get(k).join(', ')} (filt_idx ${f}, ser_idx ${sr}) hovered: ${text}`)
        twinsHovered++
      }
    }
    assert.ok(twinsHovered > 0, 'no twin point could be hovered alone')
    await page.mouse.move(box.x + 3, box.y + 3) // the title area: no point there
    assert.equal(await page.locator('#tip').isVisible(), false, 'tooltip stays after leaving the points')
    // the front as a table in the page itself: pipelines by name, the winner (best_t.json) among them
    const best = JSON.parse(readFileSync(join(dir, 'best_t.json'), 'utf8'))
    const cells = await page.locator('#front tbody tr td:first-child').allTextContents()
    assert.ok(cells.length > 0, 'Pareto table is empty')
    assert.ok(cells.every(c => c.split(' | ').length === 3), `a row without a readable name: ${cells}`)
    // every index triple of the table is its pipeline's lowest, each pipeline once
    const triples = await page.locator('#front tbody tr td:last-child').allTextContents()
    for (const t of triples) {
      const k = tw.keyOf.get(t.trim())
      assert.ok(k !== undefined, `the table's indices ${t} are no row of the results`)
      assert.equal(Number(t.trim().split(' ')[0]), tw.lowest(k), `the table shows ${t} for a pipeline whose lowest comp_idx is ${tw.lowest(k)}`)
    }
    assert.equal(new Set(triples.map(t => tw.keyOf.get(t.trim()))).size, triples.length, `a pipeline twice in the table: ${triples}`)
    assert.ok(await page.locator('#front tr.best', { hasText: best.name }).count() === 1, `winner ${best.name} not in the table`)
    assert.ok(readFileSync(join(dir, 'analyze_clustering_t.html'), 'utf8').includes(`<td><code>${htmlEscaped(best.name)}</code> (best combo)`),
      'the winner is not named in the page without its script')
    if (shots) {
      await page.setViewportSize({ width: 1400, height: 690 }) // the figure and the table, little blank below
      const w = d.panels[0].pts.find(q => q[2] === d.panels[0].best)
      const b = await page.locator('#fig svg').boundingBox()
      await page.mouse.move(b.x + 5, b.y + 5)
      await page.mouse.move(b.x + w[0] * b.width / d.w, b.y + w[1] * b.width / d.w)
      await page.locator('#tip').waitFor({ state: 'visible', timeout: 2000 })
      await page.screenshot({ path: join(shots, 'report-html.png') })
    }
    assert.deepEqual(offline, [], 'the page asked for the network')
    assert.deepEqual(errors, [], 'the page logged errors')
    console.log(`ok: ${checked} hovered points showed their combo; no network, no errors`)
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
