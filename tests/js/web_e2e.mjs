// The web UI end to end in headless Chromium: upload a real netCDF file, see
// its fields, run a narrowed sweep and watch it finish, explore the scatter
// (hover shows the combo), pick a Pareto combo, compress with it, inspect the
// store, read what the page says it lacks (the coordinates and consolidated
// metadata the merge writes), merge it and download it. The downloaded tar is
// unpacked and read by zarrita (not our reader) through the root's
// consolidated metadata; its field and coordinates are compared with what
// python3-netCDF4 reads from the input. A long sweep then shows that a reload and a restarted
// server both find the running job, and that Stop ends it. The page may load
// nothing but the server's own URLs.
//   node web_e2e.mjs [SCREENSHOT_DIR]   (env DCTK, DCTK_NCARG, DCTK_PYTHON)
// With SCREENSHOT_DIR (docs/ for the committed ones) each page is saved as web-PAGE.png.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import assert from 'node:assert/strict'
import { chromium } from 'playwright-core'
import FileSystemStore from '@zarrita/storage/fs'
import * as zarr from 'zarrita'
import { assertNameOf } from './pipeline_name.mjs'
import { readCsvRows } from './results_common.mjs'

const dctk = process.env.DCTK
const input = `${process.env.DCTK_NCARG}/cdf/meccatemp.cdf`
const shots = process.argv[2] // when given, a screenshot of each page goes there
const root = mkdtempSync(join(tmpdir(), 'dctk-web-'))
const THRESHOLD = 1e-3
const hold = join(root, 'hold') // DCTK_TEST_HOLD: where the long sweep holds

// Start the server on a free port (--port 0) and wait for the line with its URL.
function startServer (extra = [], cmd = 'run_web_ui') {
  const p = spawn(dctk, [cmd, '--port', '0', '--data-root', root, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, DCTK_TEST_HOLD: hold } })
  return new Promise((resolve, reject) => {
    let out = ''
    p.stdout.on('data', d => {
      out += d
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)
      if (m) resolve({ proc: p, url: m[1] })
    })
    p.on('exit', code => reject(new Error(`server exited with ${code} before listening: ${out}`)))
  })
}

function stopServer (s) {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return Promise.resolve()
  return new Promise(resolve => { s.proc.on('exit', resolve); s.proc.kill('SIGTERM') })
}

// Leave the server's page before stopping the server: its job polls would otherwise fail, and how many
// fail depends on how fast the machine stops and starts a process.
async function leave (page) { await page.goto('about:blank') }

async function shot (page, name) {
  if (!shots) return
  await page.waitForTimeout(300)
  await page.screenshot({ path: join(shots, `web-${name}.png`), fullPage: true })
}

// The input as python3-netCDF4 reads it (CF-decoded, masked values as NaN).
function reference () {
  const py = 'import sys, json, netCDF4, numpy as np\n' +
    'd = netCDF4.Dataset(sys.argv[1])\n' +
    'a = np.ma.filled(d.variables["t"][:].astype("f8"), np.nan)\n' +
    'coords = {k: [float(x) for x in np.ravel(d.variables[k][:])] for k in d.variables["t"].dimensions}\n' +
    'print(json.dumps({"shape": list(a.shape), "values": [None if np.isnan(x) else float(x) for x in a.ravel()],\n' +
    '                  "coords": coords}))'
  const r = spawnSync(process.env.DCTK_PYTHON || '/usr/bin/python3', ['-c', py, input], { encoding: 'utf8', maxBuffer: 1 << 28 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function toC ({ data, shape, stride }) {
  const n = shape.reduce((a, b) => a * b, 1)
  const out = new Float64Array(n)
  const idx = new Array(shape.length).fill(0)
  for (let i = 0; i < n; i++) {
    let off = 0
    for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d]
    out[i] = Number(data[off])
    for (let d = shape.length - 1; d >= 0 && ++idx[d] === shape[d]; d--) idx[d] = 0
  }
  return out
}

// picked: {combo: [c, f, s], codecs: [compressor, filter, serializer] as Zarr v3 JSON texts}
async function checkDownload (tarPath, picked) {
  const dir = join(root, 'unpacked')
  mkdirSync(dir)
  const t = spawnSync('tar', ['-xf', tarPath, '-C', dir], { encoding: 'utf8' })
  assert.equal(t.status, 0, `tar: ${t.stderr}`)
  const storeDir = join(dir, 'meccatemp.zarr')
  const meta = JSON.parse(readFileSync(join(storeDir, 't', 'zarr.json'), 'utf8'))
  const inner = meta.codecs[0].configuration.codecs.map(c => c.name)
  const prov = meta.attributes.dc_toolkit
  assert.deepEqual([prov.comp_idx, prov.filt_idx, prov.ser_idx], picked.combo, 'the store names another combo')
  for (const codec of picked.codecs.filter(Boolean)) {
    const want = JSON.parse(codec)
    for (const c of Array.isArray(want) ? want : [want]) assert.ok(inner.includes(c.name), `store codecs ${inner} lack ${c.name}`)
  }
  // through the root's consolidated metadata (zarrita throws when there is none): the field and its coordinates
  const store = await zarr.withConsolidatedMetadata(new FileSystemStore(storeDir), { format: 'v3' })
  const listed = store.contents().filter(x => x.kind === 'array').map(x => x.path).sort()
  const ref = reference()
  assert.deepEqual(listed, ['/t', ...Object.keys(ref.coords).map(k => `/${k}`)].sort(), 'the consolidated arrays')
  for (const [k, want] of Object.entries(ref.coords)) {
    const c = await zarr.open.v3(zarr.root(store).resolve(k), { kind: 'array' })
    assert.deepEqual(Array.from(toC(await zarr.get(c))), want, `coordinate ${k}`)
  }
  const arr = await zarr.open.v3(zarr.root(store).resolve('t'), { kind: 'array' })
  const got = toC(await zarr.get(arr))
  assert.deepEqual(arr.shape, ref.shape)
  let sumErr = 0; let sumAbs = 0; let n = 0
  ref.values.forEach((x, i) => {
    if (x === null) { assert.ok(Number.isNaN(got[i]), `value ${i} lost its mask`); return }
    sumErr += Math.abs(got[i] - x); sumAbs += Math.abs(x); n++
  })
  const l1 = sumErr / sumAbs
  assert.ok(l1 <= THRESHOLD, `relative L1 of the downloaded store ${l1} over ${THRESHOLD}`)
  return { n, l1, inner, coords: Object.keys(ref.coords) }
}

// The cancelled sweep's command again with --resume: it reuses the rows the CSV holds, runs the rest, and
// leaves one row per combo.
function resumeSweep (argv) {
  const r = spawnSync(dctk, [...argv.slice(1), '--resume'], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const m = /t: resuming: reused (\d+) recorded rows of (\d+)/.exec(r.stdout + r.stderr)
  assert.ok(m && Number(m[1]) >= 1, `no rows reused: ${r.stderr}`)
  const out = argv[argv.indexOf('--where-to-write') + 1]
  const lines = readFileSync(join(out, 'config_space_t_rank0.csv'), 'utf8').trim().split('\n').slice(1)
  const combos = new Set(lines.map(l => l.split(',').slice(1, 4).join(' ')))
  assert.equal(lines.length, Number(m[2]), 'the resumed CSV does not hold every combo')
  assert.equal(combos.size, lines.length, 'a combo recorded twice')
  return `${m[1]} of ${m[2]} rows reused`
}

async function main () {
  let server = await startServer()
  const browser = await chromium.launchPersistentContext(join(root, '.profile'), {
    executablePath: '/usr/bin/chromium',
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  const offline = []; const errors = []
  try {
    const page = await browser.newPage()
    await page.route('**/*', route => {
      const u = route.request().url()
      if (u.startsWith('http://127.0.0.1:') || u.startsWith('data:')) return route.continue()
      offline.push(u)
      return route.abort()
    })
    page.on('pageerror', e => errors.push(String(e)))
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()) })
    await page.goto(server.url)

    // 1. upload the file; its fields appear
    await page.setInputFiles('#upload-file', input)
    await page.click('#upload-btn')
    await page.locator('#upload-msg', { hasText: 'Saved as uploads/meccatemp.cdf' }).waitFor()
    await page.locator('#fields tbody tr', { hasText: 'time, lat, lon' }).waitFor()
    assert.equal(readFileSync(join(root, 'uploads', 'meccatemp.cdf')).compare(readFileSync(input)), 0, 'upload changed the bytes')
    await shot(page, 'dataset')

    // 2. a narrowed sweep (codecs zarrita decodes), watched to the end
    await page.click('text=Next: set up the sweep')
    await page.selectOption('#sweep-field', 't')
    await page.selectOption('#sf-compressor-class', 'zstd')
    await page.selectOption('#sf-filter-class', 'bitround')
    await page.selectOption('#sf-serializer-class', 'none')
    await page.fill('#sf-eval-data-size-limit', '100KB')
    // the budget comes first in the form
    assert.equal(await page.locator('#sweep-flags [data-flag]').first().getAttribute('data-flag'), '--l1-threshold')
    await page.fill('#sf-l1-threshold', String(THRESHOLD))
    await page.fill('#sf-threads-per-rank', '2')
    await page.click('#sweep-start')
    await page.locator('#job-state', { hasText: /^done$/ }).waitFor({ timeout: 60000 })
    const progress = await page.textContent('#job-progress')
    assert.match(progress, /Finished: 1 field/)
    assert.equal(await page.evaluate(() => document.getElementById('job-bar').style.width), '100%')
    await shot(page, 'sweep')
    // the job's URL in a browser that never chose a dataset shows the job's dataset and field
    const sweepUrl = page.url()
    const saved = await page.evaluate(() => JSON.stringify(localStorage))
    await page.evaluate(() => localStorage.clear())
    const fresh = await browser.newPage()
    await fresh.goto(sweepUrl)
    await fresh.locator('#job-state', { hasText: /^done$/ }).waitFor()
    assert.equal(await fresh.textContent('#sweep-dataset'), 'uploads/meccatemp.cdf')
    assert.equal(await fresh.inputValue('#sweep-field'), 't')
    await fresh.close()
    await page.evaluate(s => { for (const [k, v] of Object.entries(JSON.parse(s))) localStorage.setItem(k, v) }, saved)

    // 3. the scatter: every row is a point, hover shows the combo
    await page.click('#job-results')
    await page.locator('#plot circle.pt').first().waitFor()
    const r = await page.evaluate(() => state.results)
    assert.equal(await page.locator('#plot circle.pt').count(), r.rows.length)
    assert.ok(r.rows.length > 1 && r.kept > 0 && r.rows.some(x => x[7]), 'no Pareto front')
    // the points are the rows measured on the whole sample (kept or rejected), as the job's CSV says (read
    // here, not through the server): the adaptive search's pruned rows hold a part's figures, not a point
    const sweepJob = await page.evaluate(() => state.sweepJob)
    const job = await (await fetch(`${server.url}api/jobs/${encodeURIComponent(sweepJob)}`)).json()
    const csvRows = readCsvRows(join(root, job.out, 'config_space_t_rank0.csv'))
    const byStatus = s => csvRows.filter(x => x.status === s)
    // twin rows (one pipeline under several comp_idx of a stage: the same filt_idx, ser_idx and compressor JSON)
    // are one candidate, shown under the lowest comp_idx of the CSV's rows of that pipeline (issue 33)
    const pipe = x => `${x.filt_idx} ${x.ser_idx} ${x.compressor}`
    const lowest = new Map()
    for (const x of csvRows) lowest.set(pipe(x), Math.min(lowest.get(pipe(x)) ?? Infinity, Number(x.comp_idx)))
    const key = x => `${lowest.get(pipe(x))} ${x.filt_idx} ${x.ser_idx}`
    const measured = [...byStatus('kept'), ...byStatus('rejected')].filter(x => Number.isFinite(x.ratio) && Number.isFinite(x.l1_rel))
    assert.deepEqual(r.rows.map(x => `${x[0]} ${x[1]} ${x[2]}`).sort(), measured.map(key).sort(), 'plotted points')
    assert.ok(byStatus('pruned').length > 0, 'the sweep is adaptive: some rows are pruned')
    for (const s of ['kept', 'rejected', 'failed', 'pruned', 'left out']) assert.equal(r.counts[s], byStatus(s).length, s)
    const drawn = await page.locator('#plot circle.pt').evaluateAll(cs => cs.map(c => Number(c.dataset.i)))
    assert.deepEqual(drawn.sort((a, b) => a - b), r.rows.map((x, i) => i), 'circles against the rows')
    // the readers filter (row [12]; [11] holds the failed gates): only points whose every codec those readers decode are left
    for (const [level, ok] of [['core', ['core']], ['numcodecs', ['core', 'numcodecs']]]) {
      await page.selectOption('#res-level', level)
      assert.equal(await page.locator('#plot circle.pt').count(), r.rows.filter(x => ok.includes(x[12])).length, level)
    }
    assert.ok(r.rows.every(x => ['core', 'numcodecs', 'plugin', 'dctk'].includes(x[12])), 'a row without its level')
    await page.selectOption('#res-level', 'dctk')
    assert.equal(await page.locator('#plot circle.pt').count(), r.rows.length)
    // pruned and left-out rows are not failures, nor over the threshold: the summary counts them apart
    const summary = await page.textContent('#res-summary')
    assert.match(summary, new RegExp(`^${r.rows_total} combos: ${byStatus('kept').length} kept`))
    assert.ok(summary.includes(`, ${byStatus('pruned').length} pruned`) && summary.includes('not plotted'), summary)
    assert.ok(!summary.includes('failed') && !/over the threshold/.test(await page.textContent('#legend')), summary)
    // pick the Pareto combo with the highest ratio that is not the best (the best is pre-selected)
    const front = r.rows.map((x, i) => i).filter(i => r.rows[i][7]).sort((a, b) => r.rows[b][3] - r.rows[a][3])
    const isBest = i => r.best && r.rows[i].slice(0, 3).every((v, k) => v === r.best[k])
    const pickI = front.find(i => !isBest(i)) ?? front[0]
    const pt = page.locator(`#plot circle.pt[data-i="${pickI}"]`)
    await pt.hover({ force: true })
    const tip = page.locator('#tip')
    await tip.waitFor({ state: 'visible' })
    const [c, f, s] = r.rows[pickI]
    // the pipeline by the results' readable name (checked against its codec JSON), indices only as the hint
    const name = r.codecs[pickI][3]
    assertNameOf(name, r.codecs[pickI].slice(0, 3))
    const tipText = await tip.textContent()
    assert.ok(tipText.startsWith(name) && tipText.includes(`indices ${c} ${f} ${s} for compress_with_optimal`), tipText)
    assert.ok(!tipText.includes('{"') && !tipText.includes('comp_idx'), `raw JSON in the tooltip: ${tipText}`)
    await pt.click({ force: true })
    const pickText = await page.textContent('#pick')
    assert.ok(pickText.includes(name) && pickText.includes(`indices ${c} ${f} ${s}`), pickText)
    assert.ok((await page.textContent('#front tbody')).includes(name), 'the Pareto table does not name the pipeline')
    await shot(page, 'results')

    // 4. compress with it, inspect, download
    await page.click('#compress-btn')
    await page.locator('#store-state', { hasText: /^done$/ }).waitFor({ timeout: 60000 })
    await page.locator('#store-inspect', { hasText: 'meccatemp.zarr' }).waitFor()
    const inspect = await page.textContent('#store-inspect')
    assert.match(inspect, /\bt\b/)
    assert.ok((await page.textContent('#store-what')).includes(name), 'the store page does not name the pipeline')
    assert.ok((await page.textContent('#store-log')).includes(`with ${name} (chunks`), 'the log does not name what was written')
    // the page says what the store lacks before readers find its coordinates, and offers the merge
    const gaps = await page.textContent('#store-gaps')
    assert.ok(await page.isVisible('#store-gaps') && await page.isVisible('#store-merge'), 'no word of the merge')
    for (const k of ['time', 'lat', 'lon']) assert.ok(gaps.includes(k), `the page does not name coordinate ${k}: ${gaps}`)
    assert.ok(gaps.includes('consolidated metadata') && !gaps.includes('the fields'), gaps)
    await page.click('#store-merge')
    await page.locator('#store-gaps').waitFor({ state: 'hidden' })
    assert.ok(!(await page.isVisible('#store-merge')), 'the merge is still offered')
    assert.match(await page.textContent('#store-download'), /complete, consolidated/)
    await page.locator('#store-inspect', { hasText: 'lat' }).waitFor()
    await shot(page, 'store')
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#store-download')])
    assert.equal(dl.suggestedFilename(), 'meccatemp.zarr.tar')
    const tarPath = join(root, 'store.tar')
    await dl.saveAs(tarPath)
    const got = await checkDownload(tarPath, { combo: [c, f, s], codecs: r.codecs[pickI].slice(0, 3) })

    // the compress workflow over the sweep's fields (their best combos): t's sweep result is used, no second
    // sweep, and t, written above with another combo, is rewritten with the best (or skipped when it was it)
    const pickedJob = await page.textContent('#store-id')
    await page.goto(`${server.url}#results/${sweepJob}`)
    await page.click('#compress-all-btn')
    await page.waitForFunction(prev => location.hash.startsWith('#store/') &&
      document.getElementById('store-id').textContent !== prev, pickedJob)
    await page.locator('#store-state', { hasText: /^done$/ }).waitFor({ timeout: 60000 })
    assert.match(await page.textContent('#store-what'), /field t, each with its best combo, from sweep /)
    await page.locator('#store-inspect', { hasText: 'meccatemp.zarr' }).waitFor() // the store page shows its store
    assert.ok(await page.isVisible('#store-download'), 'no download for the workflow\'s store')
    const flowLog = await page.textContent('#store-log')
    assert.ok(flowLog.includes('t: using the sweep result') && !flowLog.includes(' combos (') &&
      (isBest(pickI) ? flowLog.includes('t: already in') : /t: in .*: rewritten/.test(flowLog)), flowLog)

    // a sweep held where this test says (DCTK_TEST_HOLD names a phase; the program holds after a combo of it):
    // its progress follows the adaptive search's phases, a reload shows it running, a second sweep waits for
    // it (the server's worker runs one job at a time), Stop ends both, a restarted server shows them as they
    // ended, and evaluate_combos --resume takes up the rows the first recorded. Nothing here waits on a slow
    // machine.
    writeFileSync(hold, 'stages')
    await page.goto(`${server.url}#sweep`)
    await page.reload() // a fresh form
    await page.selectOption('#sweep-field', 't')
    await page.selectOption('#sf-compressor-class', 'zstd')
    await page.fill('#sf-threads-per-rank', '1')
    await page.click('#sweep-start')
    await page.locator('#job-state', { hasText: /^running$/ }).waitFor()
    const longId = await page.textContent('#job-id')
    const status = id => page.evaluate(id => fetch(`/api/jobs/${id}`).then(r => r.json()), id)
    const phases = []
    for (const [want, text] of [['stages', 'stages and scouts on a probe'], ['finalists', 'finalists on the whole sample']]) {
      writeFileSync(hold, want)
      await page.locator('#job-progress', { hasText: `Field t: ${text}: ` }).waitFor()
      const p = (await status(longId)).progress
      assert.equal(p.phase, text)
      assert.ok(p.done >= 1 && p.done <= p.total, JSON.stringify(p))
      phases.push(`${p.phase} ${p.done}/${p.total}`)
    }
    await page.locator('#job-progress', { hasText: /; [1-9]\d* combos? recorded/ }).waitFor() // a finalist's row is in the CSV
    assert.ok((await status(longId)).log.includes("[test hold] holding in phase 'finalists on the whole sample' after 1 combos"))
    const second = await page.evaluate(ds => fetch('/api/jobs', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'sweep', dataset: ds, field: 't', flags: { '--compressor-class': 'zstd' } })
    }).then(r => r.json()), 'uploads/meccatemp.cdf')
    assert.equal(second.state, 'queued', JSON.stringify(second))
    await page.goto(server.url) // no hash: the page goes to the running job
    await page.locator('#job-state', { hasText: /^running$/ }).waitFor()
    assert.equal(await page.textContent('#job-id'), longId)
    assert.ok(await page.locator('#banner', { hasText: `Running: sweep ${longId}` }).isVisible())
    assert.ok(await page.locator('#banner', { hasText: `Waiting: sweep ${second.id}` }).isVisible())
    const running = await page.textContent('#job-progress')
    await page.click('#job-cancel')
    await page.locator('#job-state', { hasText: /^cancelled$/ }).waitFor()
    const ended = await status(longId)
    assert.equal(ended.exit, 143, 'a stopped sweep ends as SIGTERM would end it')
    assert.ok(/run the command again|--resume/.test(ended.log), `the stopped sweep's log says nothing of resuming: ${ended.log}`)
    // the second sweep started once the first ended: the server's end stops it as Stop does
    await page.goto(`${server.url}#sweep/${second.id}`)
    await page.locator('#job-state', { hasText: /^running$/ }).waitFor()
    await leave(page) // the page polls its server: stopped under it, a poll would log a refused connection
    await stopServer(server)
    server = await startServer()
    await page.goto(`${server.url}#sweep/${longId}`)
    await page.locator('#job-state', { hasText: /^cancelled$/ }).waitFor()
    assert.equal(await page.textContent('#job-progress'), 'Stopped: cancelled from the page.')
    const after = await status(second.id)
    assert.equal(after.state, 'cancelled', `the sweep the server's end stopped: ${JSON.stringify(after.state)}`)
    assert.equal(after.exit, 143)
    assert.equal(after.stopped, 'stopped with the server')
    rmSync(hold)
    const resumed = resumeSweep((await status(longId)).argv)

    await page.goto(`${server.url}#jobs`)
    await page.locator('#jobs tbody tr').nth(2).waitFor()
    await shot(page, 'jobs')

    // run_web_ui_vcluster: the sweep form writes a Slurm script for 4 nodes, 8 threads per rank
    const vc = await startServer([], 'run_web_ui_vcluster')
    try {
      await page.goto(vc.url)
      await page.click('#files tbody tr >> text=uploads/meccatemp.cdf')
      await page.locator('#fields tbody tr', { hasText: 'time, lat, lon' }).waitFor()
      await page.click('text=Next: set up the sweep')
      await page.selectOption('#sweep-field', 't')
      await page.selectOption('#sf-compressor-class', 'zstd')
      await page.fill('#slurm-nodes', '4')
      await page.fill('#slurm-threads', '8')
      await page.click('#slurm-write')
      await page.locator('#slurm-script', { hasText: '#SBATCH --nodes=4' }).waitFor()
      const script = await page.textContent('#slurm-script')
      for (const line of ['#SBATCH --ntasks-per-node=1', '#SBATCH --cpus-per-task=8', "SPACE_FLAGS=('--compressor-class=zstd')"]) {
        assert.ok(script.split('\n').includes(line), `script lacks ${line}`)
      }
      assert.ok(existsSync(join(root, (await page.textContent('#slurm-path')).trim())), 'the script file is not there')
      await shot(page, 'vcluster')
    } finally { await leave(page); await stopServer(vc) }

    assert.deepEqual(offline, [], 'the page asked for the network')
    assert.deepEqual(errors, [], 'the page logged errors')
    console.log(`ok: uploaded, swept ${r.rows_total} combos, picked (${c}, ${f}, ${s}), downloaded a store zarrita reads: ` +
      `${got.n} values, relative L1 ${got.l1.toExponential(2)}, codecs ${got.inner.join(' ')}, coordinates ` +
      `${got.coords.join(' ')} exact, after the merge the page offered; ` +
      `the held sweep went through ${phases.join(', ')}, survived a reload ("${running}") with a second sweep waiting, ` +
      `stopped, the second ended with the server, both shown so after a restart, and the first resumed (${resumed})`)
  } finally {
    await browser.close()
    await stopServer(server)
    if (!process.env.DCTK_KEEP) rmSync(root, { recursive: true, force: true })
  }
}

await main()
