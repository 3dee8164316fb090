// dc_toolkit web UI: plain JavaScript and SVG, nothing loaded from elsewhere.
// The page keeps its place in the URL hash (#page/job) and the chosen dataset
// in localStorage; jobs live on the server, so a reload finds them again.
'use strict'

const $ = id => document.getElementById(id)
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v)
    else e.setAttribute(k, v)
  }
  for (const k of kids) e.append(k)
  return e
}
const svgEl = (tag, attrs = {}) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  return e
}

const state = {
  config: null,
  dataset: localStorage.getItem('dctk.dataset') || '',
  field: localStorage.getItem('dctk.field') || '',
  fields: null,
  sweepJob: '', // the sweep shown on the sweep and results pages
  storeJob: '',
  results: null,
  pick: null,
  poll: null
}

function showError (msg) {
  const e = $('error')
  e.textContent = msg
  e.hidden = !msg
}

async function api (path, opts = {}) {
  const r = await fetch(path, opts)
  let body
  try { body = await r.json() } catch { body = { error: `${r.status} ${r.statusText}` } }
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`)
  return body
}
const post = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })

function fmtSize (n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++ }
  return `${i ? n.toFixed(1) : n} ${u[i]}`
}
const fmtNum = (x, d = 3) => x === null || x === undefined || x < 0 ? '–' : (x === 0 ? '0' : (Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? x.toPrecision(d) : x.toExponential(d - 1)))

// The pipeline by the results' readable name, "compressor | filter | serializer" ('-' for none); the
// server derives it from the codecs (dctk_pipeline_name), so the page and the console say the same
const pipeline = c => c[3] || '(unnamed: a sweep from before the name column)'

// --- pages -------------------------------------------------------------------

const pages = ['dataset', 'sweep', 'results', 'store', 'jobs']

function route () {
  const [page, id] = (location.hash.slice(1) || '').split('/')
  const p = pages.includes(page) ? page : 'dataset'
  for (const q of pages) $(`page-${q}`).hidden = q !== p
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === p)
  showError('')
  if (p === 'dataset') showDataset()
  if (p === 'sweep') showSweep(id)
  if (p === 'results') showResults(id)
  if (p === 'store') showStore(id)
  if (p === 'jobs') showJobs()
}

// --- 1. dataset ----------------------------------------------------------------

async function showDataset () {
  $('root').textContent = state.config.data_root
  $('upload-limit').textContent = fmtSize(state.config.max_upload_bytes)
  try {
    const { files } = await api('/api/files')
    const tb = $('files').querySelector('tbody')
    tb.replaceChildren(...files.map(f => {
      const tr = el('tr', { class: 'pick', onclick: () => chooseDataset(f.path) },
        el('td', {}, el('code', { text: f.path })), el('td', { class: 'num', text: f.kind === 'zarr' ? 'Zarr' : fmtSize(f.size) }))
      tr.dataset.path = f.path
      if (f.path === state.dataset) tr.classList.add('selected')
      return tr
    }))
    $('files-empty').hidden = files.length > 0
    if (state.dataset) await loadFields(state.dataset)
  } catch (e) { showError(e.message) }
}

async function chooseDataset (path) {
  state.dataset = path
  state.field = ''
  localStorage.setItem('dctk.dataset', path)
  localStorage.setItem('dctk.field', '')
  for (const tr of $('files').querySelectorAll('tbody tr')) tr.classList.toggle('selected', tr.dataset.path === path)
  await loadFields(path)
}

async function loadFields (path) {
  try {
    const f = await api(`/api/fields?path=${encodeURIComponent(path)}`)
    state.fields = f
    $('fields-card').hidden = false
    $('fields-path').textContent = f.path
    $('fields-format').textContent = `(${f.format})`
    $('fields').querySelector('tbody').replaceChildren(...f.vars.map(v => el('tr', {},
      el('td', {}, el('b', { text: v.name }), v.long_name ? el('div', { class: 'help', text: v.long_name }) : ''),
      el('td', { text: v.dims.join(', ') }), el('td', { text: v.shape.join(' × ') }),
      el('td', { text: v.stored === v.dtype ? v.dtype : `${v.stored} → ${v.dtype}` }), el('td', { text: v.units || '–' }),
      el('td', { text: v.coord ? 'coordinate' : 'data' }))))
  } catch (e) {
    state.fields = null
    $('fields-card').hidden = true
    showError(`${path}: ${e.message}`)
  }
}

function upload () {
  const file = $('upload-file').files[0]
  const msg = $('upload-msg')
  if (!file) { msg.textContent = 'Choose a file first.'; return }
  if (file.size > state.config.max_upload_bytes) {
    msg.textContent = `${file.name} is ${fmtSize(file.size)}, over the limit of ${fmtSize(state.config.max_upload_bytes)}.`
    return
  }
  const xhr = new XMLHttpRequest()
  const bar = $('upload-progress')
  bar.hidden = false
  xhr.upload.onprogress = e => { if (e.lengthComputable) bar.value = e.loaded / e.total }
  xhr.onload = async () => {
    bar.hidden = true
    let body = {}
    try { body = JSON.parse(xhr.responseText) } catch {}
    if (xhr.status !== 200) { msg.textContent = `Upload failed: ${body.error || xhr.status}`; return }
    msg.textContent = `Saved as ${body.path} (${fmtSize(body.size)}).`
    await showDataset()
    await chooseDataset(body.path)
  }
  xhr.onerror = () => { bar.hidden = true; msg.textContent = 'Upload failed: the connection was closed.' }
  xhr.open('POST', `/api/upload?name=${encodeURIComponent(file.name)}`)
  xhr.setRequestHeader('Content-Type', 'application/octet-stream')
  xhr.send(file)
}

// --- option forms built from the command's flags -------------------------------

// "all, none, or one of blosc lz4 zstd (default all)" -> a drop-down of those
function choices (help) {
  const m = /^all, none, or (?:one of )?([a-z0-9_ ]+?) \(default/.exec(help)
  return m ? ['all', 'none', ...m[1].split(' ')] : null
}

function buildFlags (container, flags, prefix) {
  container.replaceChildren(...flags.map(f => {
    const id = `${prefix}${f.name.replace(/^--/, '')}`
    let input
    if (f.switch && f.neg) {
      input = el('select', { id }, el('option', { value: '', text: 'default' }), el('option', { value: 'yes', text: f.name }), el('option', { value: 'no', text: f.neg }))
    } else if (f.switch) {
      input = el('input', { id, type: 'checkbox' })
      input.style.minWidth = '0'
    } else if (choices(f.help)) {
      input = el('select', { id }, el('option', { value: '', text: 'default' }), ...choices(f.help).map(c => el('option', { value: c, text: c })))
    } else {
      input = el('input', { id, placeholder: f.metavar || '' })
    }
    input.dataset.flag = f.name
    return el('div', { class: 'row' }, el('label', { for: id }, el('code', { text: f.name })), el('div', {}, input, el('div', { class: 'help', text: f.help })))
  }))
}

function readFlags (container, flags) {
  const out = {}
  for (const f of flags) {
    const input = container.querySelector(`[data-flag="${f.name}"]`)
    if (!input) continue
    if (f.switch && f.neg) { if (input.value) out[f.name] = input.value === 'yes' } else if (f.switch) { if (input.checked) out[f.name] = true } else if (input.value.trim()) out[f.name] = input.value.trim()
  }
  return out
}

// --- 2. sweep ------------------------------------------------------------------

function fillFieldSelect () {
  const sel = $('sweep-field')
  const vars = state.fields ? state.fields.vars.filter(v => !v.coord) : []
  sel.replaceChildren(el('option', { value: '', text: 'every data variable' }), ...vars.map(v => el('option', { value: v.name, text: `${v.name}  (${v.shape.join(' × ')}${v.units ? ', ' + v.units : ''})` })))
  if (state.field && vars.some(v => v.name === state.field)) sel.value = state.field
  else if (vars.length === 1) sel.value = vars[0].name
}

async function showSweep (id) {
  // a job's URL in a browser that never chose a dataset (or chose another): the job's own
  if (id) {
    try {
      const j = await api(`/api/jobs/${encodeURIComponent(id)}`)
      if (j.dataset && j.dataset !== state.dataset) {
        state.dataset = j.dataset
        state.field = j.field || ''
        state.fields = null
      }
    } catch (e) { /* watchSweep below says what is wrong with the job */ }
  }
  $('sweep-dataset').textContent = state.dataset || 'none: choose one in step 1'
  if (state.dataset && (!state.fields || state.fields.path !== state.dataset)) {
    try { state.fields = await api(`/api/fields?path=${encodeURIComponent(state.dataset)}`) } catch (e) { showError(e.message) }
  }
  fillFieldSelect()
  const vc = state.config.vcluster
  $('sweep-start').disabled = !state.dataset
  $('slurm-write').disabled = $('slurm-submit').disabled = !state.dataset
  if (vc) return
  if (!id) {
    // the newest sweep, running or not: a reload shows it again
    const { jobs } = await api('/api/jobs')
    const s = current(jobs.filter(j => j.kind === 'sweep')) || jobs.find(j => j.kind === 'sweep')
    id = s ? s.id : ''
  }
  state.sweepJob = id
  if (id) watchSweep(id)
  else $('job-card').hidden = true
}

async function startSweep () {
  const flags = readFlags($('sweep-flags'), state.config.sweep_flags)
  try {
    const job = await post('/api/jobs', { kind: 'sweep', dataset: state.dataset, field: $('sweep-field').value, flags })
    state.field = $('sweep-field').value
    localStorage.setItem('dctk.field', state.field)
    location.hash = `#sweep/${job.id}`
  } catch (e) { showError(`The sweep did not start: ${e.message}`) }
}

function stopPolling () { if (state.poll) clearTimeout(state.poll); state.poll = null }

// A job the server still holds: waiting, running, or ending after a cancel.
const active = j => ['queued', 'running', 'stopping'].includes(j.state)
// The job to show of a list (newest first): the one running, else the next to run.
const current = jobs => jobs.find(j => active(j) && j.state !== 'queued') || jobs.findLast(active)

async function watchSweep (id) {
  stopPolling()
  let j
  try { j = await api(`/api/jobs/${encodeURIComponent(id)}`) } catch (e) { showError(e.message); $('job-card').hidden = true; return }
  $('job-card').hidden = false
  $('job-id').textContent = j.id
  setState($('job-state'), j.state)
  $('job-what').textContent = `${j.dataset}${j.field ? ', field ' + j.field : ', every data variable'}: ${j.argv.slice(1).map(a => a.startsWith('/') ? a.split('/').pop() : a).join(' ')}`
  const p = j.progress || {}
  const frac = p.total ? Math.min(1, p.done / p.total) : (j.state === 'done' ? 1 : 0)
  $('job-bar').style.width = `${(frac * 100).toFixed(1)}%`
  let text
  if (j.state === 'done') text = `Finished: ${p.fields_done || 0} field(s) swept.`
  else if (j.state === 'failed') text = `Failed (exit code ${j.exit}): see the log below.`
  else if (j.state === 'lost') text = j.started
    ? 'The server stopped while the job ran (killed, or the machine restarted): it has no exit code.'
    : 'The server stopped before the job started (killed, or the machine restarted): start it again.'
  else if (j.state === 'cancelled') text = `Stopped: ${j.stopped || 'cancelled'}.`
  else if (j.state === 'queued') text = 'Waiting: the server runs one job at a time, and an earlier one is running.'
  else if (j.state === 'stopping') text = 'Stopping: the sweep ends after the combos under way; a field being written is finished first.'
  else if (!p.var || !p.total) text = `${p.var ? 'Field ' + p.var + ': r' : 'R'}eading the sample and building the codec space…`
  else text = `Field ${p.var}: ${phaseText(p)}; ${p.recorded} combo${p.recorded === 1 ? '' : 's'} recorded${p.fields_done ? `; ${p.fields_done} field(s) finished` : ''}.`
  $('job-progress').textContent = text
  const log = $('job-log')
  const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4
  log.textContent = j.log || '(empty)'
  if (atEnd) log.scrollTop = log.scrollHeight
  $('job-cancel').hidden = !['queued', 'running'].includes(j.state)
  $('job-results').hidden = !(j.vars && j.vars.length)
  $('job-results').href = `#results/${j.id}`
  updateBanner()
  if (active(j) && location.hash.startsWith('#sweep')) state.poll = setTimeout(() => watchSweep(id), 1000)
}

function setState (node, s) {
  node.textContent = s
  node.className = `state ${s}`
}

async function writeSlurm (submit) {
  const body = {
    dataset: state.dataset,
    field: $('sweep-field').value,
    flags: readFlags($('sweep-flags'), state.config.sweep_flags),
    nodes: +$('slurm-nodes').value,
    threads_per_rank: +$('slurm-threads').value,
    time: $('slurm-time').value.trim(),
    partition: $('slurm-partition').value.trim(),
    account: $('slurm-account').value.trim(),
    submit
  }
  try {
    const r = await post('/api/slurm', body)
    $('slurm-card').hidden = false
    $('slurm-path').textContent = r.path
    $('slurm-script').textContent = r.script
    const abs = p => `${state.config.data_root}/${p}`
    let s = `Written to ${abs(r.path)}; the results and the store will go to ${abs(r.out)}. `
    if (!r.sbatch) s += `sbatch is not on PATH here: on the cluster, submit it with  sbatch ${abs(r.path)}`
    else if (!submit) s += `Submit it with  sbatch ${abs(r.path)}`
    else s += r.submitted ? `Submitted: ${r.sbatch_output.trim()}` : `sbatch failed: ${r.sbatch_output.trim()}`
    $('slurm-status').textContent = s
  } catch (e) { showError(`No script: ${e.message}`) }
}

// --- 3. results ------------------------------------------------------------------

async function showResults (id) {
  stopPolling()
  const { jobs } = await api('/api/jobs')
  const sweeps = jobs.filter(j => j.kind === 'sweep')
  if (!id) id = state.sweepJob || (sweeps[0] && sweeps[0].id) || ''
  const sel = $('res-job')
  sel.replaceChildren(...sweeps.map(j => el('option', { value: j.id, text: `${j.id}  ${j.dataset}${j.field ? ' / ' + j.field : ''}  (${j.state})` })))
  sel.value = id
  if (!id) {
    $('res-empty').hidden = false
    $('res-empty').textContent = 'No sweep yet: start one in step 2.'
    $('plot').replaceChildren()
    return
  }
  state.sweepJob = id
  let j
  try { j = await api(`/api/jobs/${encodeURIComponent(id)}`) } catch (e) { showError(e.message); return }
  const vsel = $('res-var')
  const prev = vsel.value
  vsel.replaceChildren(...(j.vars || []).map(v => el('option', { value: v, text: v })))
  if ((j.vars || []).includes(prev)) vsel.value = prev
  else if ((j.vars || []).includes(state.field)) vsel.value = state.field
  await loadResults()
  // a running sweep: the scatter grows as rows arrive
  if (active(j) && location.hash.startsWith('#results')) state.poll = setTimeout(() => showResults(id), 3000)
}

async function loadResults () {
  const id = state.sweepJob; const v = $('res-var').value
  $('res-empty').hidden = true
  if (!v) {
    $('res-empty').hidden = false
    $('res-empty').textContent = 'This sweep has no results yet.'
    $('plot').replaceChildren()
    return
  }
  try {
    const r = await api(`/api/jobs/${encodeURIComponent(id)}/results?var=${encodeURIComponent(v)}&metric=${$('res-metric').value}`)
    state.results = r
    const best = r.best ? r.rows.find(x => x[0] === r.best[0] && x[1] === r.best[1] && x[2] === r.best[2]) : null
    // every row by status, as the sweep's summary line; only kept and rejected ones are plotted
    const n = r.counts
    const notDrawn = n.failed + n.pruned + n['left out']
    $('res-summary').textContent = `${r.rows_total} combos: ${n.kept} kept` +
      (r.target_ratio !== null && r.target_ratio !== undefined
        ? ` (ratio ≥ ${fmtNum(r.target_ratio)}: the smallest relative L1 wins, the other gates reported)`
        : r.threshold !== null ? ` (relative L1 ≤ ${fmtNum(r.threshold)}, and every other gate)` : ' (no threshold: lossless only; give --l1-threshold to allow lossy combos)') +
      ['rejected', 'failed', 'pruned', 'left out'].filter(s => n[s]).map(s => `, ${n[s]} ${s}`).join('') +
      (notDrawn ? ' (not plotted: not measured on the whole sample; their rows say why)' : '') +
      (r.k ? `; ${r.k} clusters` : '') +
      (best ? `. Best: ratio ${fmtNum(best[3], 4)} with ${pipeline(r.codecs[r.rows.indexOf(best)])}.` : '.') +
      (r.source === 'csv' ? ' (still running: partial results)' : '')
    if (!state.pick || state.pick.var !== v || state.pick.job !== id) {
      const i = best ? r.rows.indexOf(best) : -1
      state.pick = i >= 0 ? { job: id, var: v, i, combo: best.slice(0, 3) } : null
    } else {
      const i = r.rows.findIndex(x => x[0] === state.pick.combo[0] && x[1] === state.pick.combo[1] && x[2] === state.pick.combo[2])
      state.pick.i = i
    }
    drawPlot(r)
    drawFront(r)
    showPick()
  } catch (e) { showError(e.message) }
}

const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f']

function drawPlot (r) {
  const svg = $('plot')
  const W = svg.clientWidth || 1100; const H = 520
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`)
  const m = { l: 90, r: 20, t: 16, b: 44 }
  const rows = r.rows
  const xs = rows.map(x => x[3]); const pos = rows.map(x => x[4]).filter(e => e > 0)
  const zeroBand = rows.some(x => x[4] === 0)
  // ratios span orders of magnitude too (lossy outliers reach hundreds): log axis
  const lx = xs.filter(v => v > 0).map(Math.log10)
  let x0 = Math.min(...lx, 0); let x1 = Math.max(...lx, 0)
  if (x1 - x0 < 0.1) { x0 -= 0.05; x1 += 0.05 }
  const pad = (x1 - x0) * 0.03; x0 -= pad; x1 += pad
  let y0 = pos.length ? Math.log10(Math.min(...pos)) : -6; let y1 = pos.length ? Math.log10(Math.max(...pos)) : 0
  if (r.threshold > 0) { y0 = Math.min(y0, Math.log10(r.threshold)); y1 = Math.max(y1, Math.log10(r.threshold)) }
  y0 = Math.floor(y0); y1 = Math.ceil(y1); if (y1 === y0) y1 = y0 + 1
  const plotB = H - m.b - (zeroBand ? 26 : 0)
  const X = v => m.l + (Math.log10(Math.max(v, 1e-9)) - x0) / (x1 - x0) * (W - m.l - m.r)
  const Y = e => e > 0 ? m.t + (y1 - Math.log10(e)) / (y1 - y0) * (plotB - m.t) : H - m.b - 8
  const kids = []
  for (let d = y0; d <= y1; d++) {
    kids.push(svgEl('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: Y(10 ** d), y2: Y(10 ** d) }))
    const t = svgEl('text', { x: m.l - 8, y: Y(10 ** d) + 4, 'text-anchor': 'end' }); t.textContent = `1e${d}`; kids.push(t)
  }
  for (const v of ratioTicks(x0, x1)) {
    kids.push(svgEl('line', { class: 'grid', x1: X(v), x2: X(v), y1: m.t, y2: H - m.b }))
    const t = svgEl('text', { x: X(v), y: H - m.b + 16, 'text-anchor': 'middle' }); t.textContent = +v.toPrecision(4); kids.push(t)
  }
  if (zeroBand) {
    const t = svgEl('text', { x: m.l - 8, y: H - m.b - 4, 'text-anchor': 'end' }); t.textContent = '0 (lossless)'; kids.push(t)
    kids.push(svgEl('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: plotB + 8, y2: plotB + 8, 'stroke-dasharray': '2 3' }))
  }
  kids.push(svgEl('line', { class: 'axis', x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }))
  kids.push(svgEl('line', { class: 'axis', x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }))
  const xl = svgEl('text', { x: (m.l + W - m.r) / 2, y: H - 8, 'text-anchor': 'middle' }); xl.textContent = 'compression ratio (log, higher is better)'; kids.push(xl)
  const metric = {
    l1_rel: 'relative L1 error', l2_rel: 'relative L2 error', linf_rel: 'relative Linf error', bias_rel: '|relative bias|',
    pearson: '1 - Pearson correlation', ssim: '1 - SSIM', psnr_db: 'RMSE / range (from PSNR)',
    rel_err_frac: 'fraction of points over 1e-4 relative error', extremes_rel: 'relative L1 on the extremes',
    gradient_rel: 'relative L1 of the gradients'
  }[r.metric]
  const yl = svgEl('text', { x: 16, y: (m.t + plotB) / 2, 'text-anchor': 'middle', transform: `rotate(-90 16 ${(m.t + plotB) / 2})` }); yl.textContent = `${metric} (log, lower is better)`; kids.push(yl)
  if (r.threshold > 0 && r.metric === 'l1_rel') {
    kids.push(svgEl('line', { class: 'thr', x1: m.l, x2: W - m.r, y1: Y(r.threshold), y2: Y(r.threshold) }))
    const t = svgEl('text', { x: W - m.r - 4, y: Y(r.threshold) - 5, 'text-anchor': 'end' }); t.textContent = `threshold ${fmtNum(r.threshold)}`; t.style.fill = '#d62728'; kids.push(t)
  }
  // the Pareto front as a step line, then the points: rejected first, front last (on top)
  const front = rows.map((x, i) => i).filter(i => rows[i][7]).sort((a, b) => rows[b][3] - rows[a][3])
  if (front.length > 1) kids.push(svgEl('polyline', { class: 'frontline', points: front.map(i => `${X(rows[i][3])},${Y(rows[i][4])}`).join(' ') }))
  const order = rows.map((x, i) => i).sort((a, b) => (rows[a][5] - rows[b][5]) || (rows[a][7] - rows[b][7]))
  // the readers chosen: a point whose pipeline needs more is not drawn (as compress --codecs)
  const levels = ['core', 'numcodecs', 'plugin', 'dctk']
  const maxLevel = levels.indexOf($('res-level').value)
  for (const i of order) {
    const x = rows[i]
    if (levels.indexOf(x[12]) > maxLevel) continue
    const c = svgEl('circle', { cx: X(x[3]).toFixed(1), cy: Y(x[4]).toFixed(1), r: x[7] ? 5 : 4, class: `pt${x[5] ? '' : ' out'}${x[7] ? ' front' : ''}` })
    if (x[5]) c.setAttribute('fill', x[6] >= 0 ? palette[x[6] % palette.length] : '#1f77b4')
    c.dataset.i = i
    kids.push(c)
  }
  // only what the plot shows: no grey entry when no combo was rejected
  const lg = [...(r.counts.rejected ? [['#c3c9d1', 'rejected (a gate failed)', '']] : []), ['#ffffff', 'on the Pareto front', '#111'], ['#ffffff', 'picked', '#d62728']]
  for (let k = 0; k < (r.k || 0); k++) lg.push([palette[k % palette.length], `cluster ${k + 1}`, ''])
  $('legend').replaceChildren(...lg.map(([c, label, b]) => {
    const s = el('span', { text: label })
    s.style.setProperty('--c', c)
    if (b) s.style.setProperty('--b', b)
    return s
  }))
  svg.replaceChildren(...kids)
  markPick()
}

// 1, 2, 5, 10, 20, ... within [10^a, 10^b]; finer (1..9) over a short range
function ratioTicks (a, b) {
  const steps = b - a < 1.2 ? [1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9] : [1, 2, 5]
  const out = []
  for (let d = Math.floor(a); d <= Math.ceil(b); d++) for (const s of steps) { const v = s * 10 ** d; if (Math.log10(v) >= a && Math.log10(v) <= b) out.push(v) }
  return out
}

function markPick () {
  for (const c of $('plot').querySelectorAll('.pt.sel')) c.classList.remove('sel')
  if (!state.pick || state.pick.i < 0) return
  const c = $('plot').querySelector(`.pt[data-i="${state.pick.i}"]`)
  if (c) { c.classList.add('sel'); c.parentNode.append(c) }
}

function comboText (r, i) {
  const x = r.rows[i]; const c = r.codecs[i]
  return { x, c, idx: `indices ${x[0]} ${x[1]} ${x[2]} for compress_with_optimal` }
}

function onHover (ev) {
  const t = ev.target
  const tip = $('tip')
  if (!t.classList || !t.classList.contains('pt')) { tip.hidden = true; return }
  const r = state.results; const { x, c, idx } = comboText(r, +t.dataset.i)
  tip.replaceChildren(
    el('div', {}, el('b', { class: 'pipe', text: pipeline(c) })),
    el('div', { class: 'muted', text: `compressor | filter | serializer; ${idx}` }),
    el('div', { text: `ratio ${fmtNum(x[3], 4)}; relative L1 ${fmtNum(x[8])}, L2 ${fmtNum(x[9])}, Linf ${fmtNum(x[10])}` }),
    el('div', { text: (x[5] ? 'kept' : 'rejected') + (x[7] ? ', on the Pareto front' : '') }),
    x[11] ? el('div', { text: `failed gates: ${x[11].split(',').join(', ')}` }) : '',
    el('div', { text: `readers: ${x[12]} (compress --codecs ${x[12] === 'dctk' ? 'all' : x[12]})` }))
  tip.hidden = false
  const wrap = $('plot-wrap').getBoundingClientRect()
  const px = ev.clientX - wrap.left; const py = ev.clientY - wrap.top
  tip.style.left = `${Math.min(px + 14, wrap.width - 420)}px`
  tip.style.top = `${py + 14}px`
}

function pickRow (i) {
  const r = state.results
  state.pick = { job: state.sweepJob, var: r.var, i, combo: r.rows[i].slice(0, 3) }
  markPick()
  showPick()
  for (const tr of $('front').querySelectorAll('tbody tr')) tr.classList.toggle('selected', +tr.dataset.i === i)
}

function drawFront (r) {
  const rows = r.rows.map((x, i) => i).filter(i => r.rows[i][7]).sort((a, b) => r.rows[b][3] - r.rows[a][3])
  $('front').querySelector('tbody').replaceChildren(...rows.slice(0, 40).map(i => {
    const tr = el('tr', { class: 'pick', onclick: () => pickRow(i) },
      el('td', { class: 'num', text: fmtNum(r.rows[i][3], 4) }), el('td', { class: 'num', text: fmtNum(r.rows[i][4]) }),
      el('td', { text: pipeline(r.codecs[i]) }))
    tr.dataset.i = i
    if (state.pick && state.pick.i === i) tr.classList.add('selected')
    return tr
  }))
}

function showPick () {
  const box = $('pick'); const r = state.results
  $('compress-btn').disabled = !(state.pick && state.pick.i >= 0)
  if (!state.pick || state.pick.i < 0) { box.replaceChildren(el('p', { class: 'hint', text: 'None yet: click a point or a row of the Pareto front.' })); return }
  const { x, c, idx } = comboText(r, state.pick.i)
  const best = r.best && r.best[0] === x[0] && r.best[1] === x[1] && r.best[2] === x[2]
  const dl = el('dl', {})
  const add = (k, v) => dl.append(el('dt', { text: k }), el('dd', { text: v }))
  add('field', r.var)
  add('pipeline', pipeline(c) + (best ? '  (the best the sweep found)' : ''))
  add('combo', idx)
  add('ratio', fmtNum(x[3], 4))
  add('errors', `relative L1 ${fmtNum(x[8])}, L2 ${fmtNum(x[9])}, Linf ${fmtNum(x[10])}`)
  if (!x[5]) add('note', `rejected${x[11] ? ` (failed gates: ${x[11].split(',').join(', ')})` : ''}: compress_with_optimal writes it, but verification will refuse it`)
  box.replaceChildren(dl)
}

// A write job (its store page next), or the reason it did not start
async function startWrite (spec) {
  try {
    const job = await post('/api/jobs', spec)
    location.hash = `#store/${job.id}`
  } catch (e) { showError(`The compression did not start: ${e.message}`) }
}

const compress = () => startWrite({
  kind: 'compress', sweep: state.sweepJob, var: state.results.var, combo: state.pick.combo,
  flags: readFlags($('write-flags'), writeOnlyFlags())
})
const compressAll = () => startWrite({ kind: 'compress_all', sweep: state.sweepJob })

// What a write job wrote: the picked combo of one field, or each swept field's best
const writeText = j => j.kind === 'compress_all'
  ? `${j.dataset}, ${j.field ? 'field ' + j.field : 'every data variable'}, each with its best combo, from sweep ${j.sweep}`
  : `${j.dataset}, field ${j.var}, ${j.name || 'combo'} (indices ${j.combo.join(' ')}) from sweep ${j.sweep}`

// compress_with_optimal's own flags; the space flags come from the sweep
const writeOnlyFlags = () => state.config.write_flags.filter(f => !state.config.sweep_flags.some(s => s.name === f.name))

// --- 4. store ----------------------------------------------------------------------

async function showStore (id) {
  stopPolling()
  const { jobs } = await api('/api/jobs')
  const cs = jobs.filter(j => j.kind !== 'sweep')
  if (!id) id = state.storeJob || (cs[0] && cs[0].id) || ''
  $('store-job').replaceChildren(...cs.map(j => el('option', { value: j.id, text: `${j.id}  ${writeText(j)}  (${j.state})` })))
  $('store-job').value = id
  $('store-empty').hidden = !!id
  $('store-card').hidden = !id
  if (!id) return
  state.storeJob = id
  let j
  try { j = await api(`/api/jobs/${encodeURIComponent(id)}`) } catch (e) { showError(e.message); return }
  $('store-id').textContent = j.id
  setState($('store-state'), j.state)
  $('store-what').textContent = writeText(j)
  $('store-log').textContent = j.log || '(empty)'
  const dl = $('store-download')
  dl.hidden = !(j.state === 'done' && j.store)
  dl.href = `/api/jobs/${encodeURIComponent(id)}/download`
  showGaps(j.state === 'done' && j.store ? j.gaps : null)
  $('store-path').textContent = j.store ? `${j.store} under the data root` : ''
  if (j.state === 'done' && j.store) {
    try {
      const ins = await api(`/api/jobs/${encodeURIComponent(id)}/inspect`)
      $('store-inspect').textContent = ins.text
    } catch (e) { $('store-inspect').textContent = e.message }
  } else {
    $('store-inspect').textContent = j.state === 'failed' ? 'Not written: the compression failed (see the log).' : 'Writing…'
  }
  updateBanner()
  if (active(j) && location.hash.startsWith('#store')) state.poll = setTimeout(() => showStore(id), 1000)
}

// What the store lacks before readers find its coordinates and consolidated metadata (the merge gives
// them), said above the download; the merge offered once every field of the dataset is in.
function gapsText (g) {
  const lacks = []
  if (g.fields) lacks.push(`the fields ${g.fields} (compress them too)`)
  if (g.coords) lacks.push(`the coordinates ${g.coords}`)
  if (!g.consolidated) lacks.push('consolidated metadata')
  const what = `This store is not complete: it lacks ${lacks.join(', ')}: the merge has not run.`
  return what + (g.merge ? ' “Merge the store” writes them; the download holds only what is there now.' : '')
}

function showGaps (g) {
  const box = $('store-gaps'); const merge = $('store-merge')
  box.hidden = !g || g.complete
  merge.hidden = !g || g.complete || !g.merge
  box.textContent = g && !g.complete ? gapsText(g) : ''
  if (g && g.complete) $('store-download').textContent = 'Download the store (.tar): complete, consolidated'
  else $('store-download').textContent = 'Download the store (.tar)'
}

async function mergeStore () {
  const id = state.storeJob
  const merge = $('store-merge')
  merge.disabled = true
  try {
    const m = await post(`/api/jobs/${encodeURIComponent(id)}/merge`, {})
    if (m.exit !== 0) showError(`The merge failed: ${m.text}`)
    await showStore(id)
  } catch (e) { showError(e.message) } finally { merge.disabled = false }
}

// --- jobs -------------------------------------------------------------------------

// "halving on 1/3 of the sample: 4 of 18 combos": the phase the adaptive search is in (none when exhaustive)
function phaseText (p) {
  return `${p.phase ? p.phase + ': ' : ''}${p.done} of ${p.total} combos`
}

function progressText (j) {
  if (j.kind !== 'sweep') return j.state === 'done' ? 'written' : ''
  const p = j.progress || {}
  return p.var ? `${p.var}: ${p.total ? phaseText(p) : 'preparing'}` : ''
}

async function showJobs () {
  stopPolling()
  const { jobs } = await api('/api/jobs')
  $('jobs').querySelector('tbody').replaceChildren(...jobs.map(j => {
    const st = el('span', {}); setState(st, j.state)
    return el('tr', {},
      el('td', {}, el('a', { href: `#${j.kind === 'sweep' ? 'sweep' : 'store'}/${j.id}`, text: j.id })),
      el('td', { text: j.kind }), el('td', { text: j.dataset }), el('td', { text: j.field || j.var || 'all' }),
      el('td', {}, st), el('td', { text: progressText(j) }))
  }))
  if (jobs.some(active)) state.poll = setTimeout(showJobs, 2000)
}

async function updateBanner () {
  try {
    const { jobs } = await api('/api/jobs')
    const run = jobs.filter(active)
    const b = $('banner')
    b.hidden = !run.length
    b.replaceChildren(...run.map(j => el('div', {}, `${j.state === 'queued' ? 'Waiting' : 'Running'}: ${j.kind} ${j.id} on ${j.dataset}${j.field ? ' / ' + j.field : ''} — ${progressText(j) || 'working'} `,
      el('a', { href: `#${j.kind === 'sweep' ? 'sweep' : 'store'}/${j.id}`, text: 'show' }))))
  } catch {}
}

// --- start --------------------------------------------------------------------------

async function main () {
  try { state.config = await api('/api/config') } catch (e) { showError(`The server does not answer: ${e.message}`); return }
  const vc = state.config.vcluster
  // on a cluster the threads per rank come from the Slurm form (--cpus-per-task)
  if (vc) state.config.sweep_flags = state.config.sweep_flags.filter(f => f.name !== '--threads-per-rank')
  buildFlags($('sweep-flags'), state.config.sweep_flags, 'sf-')
  buildFlags($('write-flags'), writeOnlyFlags(), 'wf-')
  if (vc) {
    $('sweep-title').textContent = '2. Sweep on a Slurm cluster'
    $('nav-sweep').innerHTML = '2&nbsp;Slurm&nbsp;script'
    $('sweep-hint').textContent = 'Choose the options of the sweep and the size of the job: the page writes a batch script (one MPI rank per node, threads inside each) that sweeps, writes every field with its best combo and merges the store.'
    $('slurm-form').hidden = false
    // the cluster job's results stay in its folder; this server runs no jobs of its own
    for (const a of document.querySelectorAll('nav a[data-page="results"], nav a[data-page="store"]')) a.hidden = true
    $('sweep-start').hidden = true
    $('slurm-write').hidden = false
    $('slurm-submit').hidden = !state.config.sbatch
    $('sbatch-note').hidden = state.config.sbatch
  }
  $('upload-btn').addEventListener('click', upload)
  $('sweep-start').addEventListener('click', startSweep)
  $('slurm-write').addEventListener('click', () => writeSlurm(false))
  $('slurm-submit').addEventListener('click', () => writeSlurm(true))
  $('job-cancel').addEventListener('click', async () => { await post(`/api/jobs/${state.sweepJob}/cancel`, {}); watchSweep(state.sweepJob) })
  $('res-job').addEventListener('change', () => { location.hash = `#results/${$('res-job').value}` })
  $('res-var').addEventListener('change', loadResults)
  $('res-metric').addEventListener('change', loadResults)
  $('res-level').addEventListener('change', () => { if (state.results) { drawPlot(state.results); markPick() } })
  $('store-job').addEventListener('change', () => { location.hash = `#store/${$('store-job').value}` })
  $('store-merge').addEventListener('click', mergeStore)
  $('plot').addEventListener('mousemove', onHover)
  $('plot').addEventListener('mouseleave', () => { $('tip').hidden = true })
  $('plot').addEventListener('click', ev => { if (ev.target.classList && ev.target.classList.contains('pt')) pickRow(+ev.target.dataset.i) })
  $('compress-btn').addEventListener('click', compress)
  $('compress-all-btn').addEventListener('click', compressAll)
  window.addEventListener('hashchange', route)
  if (!location.hash) {
    // a reload (or a new tab) with a job running goes to it
    const { jobs } = await api('/api/jobs')
    const run = current(jobs)
    if (run) location.hash = `#${run.kind === 'sweep' ? 'sweep' : 'store'}/${run.id}`
  }
  route()
  updateBanner()
}

main()
