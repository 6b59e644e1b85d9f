/* Temper tuning report: builds the whole page from window.TEMPER_REPORT.
   The page is one offline HTML file, so the only library is the global Chart (Chart.js 3).
   Every field may be missing or empty: read through the guards below, never throw,
   never write to the console (the C++ tests treat console output as a failure). */
(function () {
  'use strict';

  // ---- guards: the data comes from a log of unknown age, so trust nothing ----
  const arr = (v) => (Array.isArray(v) ? v : []);
  const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
  const num = (v) => (typeof v === 'number' && isFinite(v) ? v : null);
  const pos = (v) => (num(v) !== null && v > 0 ? v : null);
  const str = (v) => (v == null ? '' : String(v));

  const D = obj(window.TEMPER_REPORT);
  const machines = arr(D.machines).map(obj);
  const workloads = arr(D.workloads).map(obj);
  const failures = arr(D.failures).map(obj).filter((f) => pos(f.count) !== null)
    .map((f) => Object.assign({}, f, { kind: str(f.kind) || 'unknown' }));

  const mIndex = new Map(machines.map((m, i) => [num(m.id) === null ? i : m.id, i]));
  const machineOf = (id) => machines[mIndex.get(id)];
  const mLabel = (id) => str((machineOf(id) || {}).label) || 'machine ' + (id == null ? '?' : id);
  const probeOf = (id) => {
    const p = (machineOf(id) || {}).probe;
    return p && typeof p === 'object' ? p : null;
  };
  const wName = (w) => str(w.workload) || str(w.op) || 'workload ' + (w.id == null ? '?' : w.id);
  const resultsOf = (w) => arr(w.results).map(obj);

  // ---- number formats (the raw value always goes to data-value) ----
  const fmt = {
    ms: (v) => (Math.abs(v) >= 1e4 ? v.toFixed(0) : v.toPrecision(4)),
    g1: (v) => v.toFixed(1),
    pct: (v) => v.toFixed(1) + '%',
    int: (v) => String(Math.round(v)),
    x: (v) => v.toFixed(2) + '×',
    ai: (v) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3)),
  };

  const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];
  const mColor = (id) => (mIndex.has(id) ? PALETTE[mIndex.get(id) % PALETTE.length] : '#9ca3af'); // grey: not in machines
  const kinds = [];
  const kColor = (k) => {
    if (kinds.indexOf(k) < 0) kinds.push(k);
    return PALETTE[(kinds.indexOf(k) + 2) % PALETTE.length]; // offset: keep kinds apart from machine 0/1 colours
  };

  // Small DOM builder; text goes through textContent so log strings can never inject markup.
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k of Object.keys(attrs || {})) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  const note = (text) => el('p', { class: 'note', text });
  const section = (id, title, ...kids) => el('section', { id }, el('h2', { text: title }), ...kids);

  // ---- tables: sortable, filterable, downloadable ----
  // cols: [{key, label, num: formatter (numeric column) | undefined (text)}]; rows: objects keyed by col key.
  function table(id, file, cols, rows) {
    const tbody = el('tbody');
    const items = rows.map((r) => {
      const tr = el('tr');
      for (const c of cols) {
        const v = r[c.key];
        const td = el('td', { 'data-col': c.key });
        if (c.num) {
          td.className = 'num';
          if (num(v) !== null) {
            td.dataset.value = String(v); // shortest round-trip form = the JSON's number
            td.textContent = c.num(v);
          }
        } else td.textContent = str(v);
        tr.append(td);
      }
      tbody.append(tr);
      return { r, tr, text: Array.from(tr.cells, (c) => c.textContent).join('\t').toLowerCase() };
    });
    const count = el('span', { class: 'count' });
    const visible = () => items.filter((i) => !i.tr.hidden);
    // Zebra stripes by class, since :nth-child would count hidden rows.
    const restripe = () => {
      visible().forEach((i, n) => i.tr.classList.toggle('alt', n % 2 === 1));
      count.textContent = visible().length + ' of ' + items.length + ' rows';
    };

    let sortKey = null;
    let asc = true;
    const ths = cols.map((c) =>
      el('th', { scope: 'col', class: c.num ? 'num' : null, title: 'Click to sort', onclick: () => sortBy(c) }, c.label));
    function sortBy(c) {
      asc = sortKey === c.key ? !asc : true;
      sortKey = c.key;
      items.sort((a, b) => {
        const x = a.r[c.key];
        const y = b.r[c.key];
        if (c.num) {
          const nx = num(x);
          const ny = num(y);
          if (nx === null || ny === null) return (nx === null) - (ny === null); // blanks last either way
          return asc ? nx - ny : ny - nx;
        }
        const s = str(x).localeCompare(str(y), undefined, { numeric: true });
        return asc ? s : -s;
      });
      items.forEach((i) => tbody.append(i.tr));
      ths.forEach((th, n) => th.setAttribute('aria-sort', cols[n] === c ? (asc ? 'ascending' : 'descending') : 'none'));
      restripe();
    }

    const filter = el('input', { type: 'search', placeholder: 'Filter rows…', 'aria-label': 'Filter ' + file });
    filter.addEventListener('input', () => {
      const q = filter.value.trim().toLowerCase();
      for (const i of items) i.tr.hidden = q !== '' && i.text.indexOf(q) < 0;
      restripe();
    });

    // Downloads carry raw values (not the rounded text) in the shown order, filtered rows only.
    function download(ext) {
      const rows = visible().map((i) => {
        const o = {};
        for (const c of cols) o[c.key] = i.r[c.key] == null ? null : i.r[c.key];
        return o;
      });
      const cell = (v) => {
        const s = str(v);
        return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
      };
      const body = ext === 'json'
        ? JSON.stringify(rows, null, 2) + '\n'
        : [cols.map((c) => cell(c.key))].concat(rows.map((r) => cols.map((c) => cell(r[c.key]))))
          .map((l) => l.join(',')).join('\r\n') + '\r\n';
      const url = URL.createObjectURL(new Blob([body], { type: ext === 'json' ? 'application/json' : 'text/csv' }));
      const a = el('a', { href: url, download: file + '.' + ext });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 5000);
    }

    restripe();
    return el('div', { class: 'table-block' },
      el('div', { class: 'table-tools' }, filter,
        el('button', { type: 'button', onclick: () => download('csv') }, 'CSV'),
        el('button', { type: 'button', onclick: () => download('json') }, 'JSON'), count),
      el('div', { class: 'table-wrap' },
        el('table', { id }, el('thead', null, el('tr', null, ...ths)), tbody)));
  }

  // ---- charts: collected while the DOM is built, created once it is attached ----
  const pending = [];
  function chartBox(name, config) {
    const canvas = el('canvas', { 'data-chart': name, role: 'img', 'aria-label': name });
    pending.push([canvas, config]);
    return el('div', { class: 'chart-box' }, canvas);
  }
  // animation off: the tests screenshot the page at once.
  function options(title, scales, tooltip, extra) {
    return Object.assign({
      animation: false, responsive: true, maintainAspectRatio: false, scales,
      plugins: { title: { display: true, text: title }, legend: { position: 'bottom' }, tooltip: tooltip || {} },
    }, extra || {});
  }
  const axis = (text, more) => Object.assign({ title: { display: true, text } }, more || {});

  // ---- derived metrics of one (workload, machine) result ----
  function metrics(w, r) {
    const p = probeOf(r.machine) || {};
    const peak = pos(p.fp32_gflops);
    const bw = pos(p.bandwidth_gbs);
    const g = num(r.best_gflops);
    const ai = pos(w.flops) && pos(w.bytes) ? w.flops / w.bytes : null;
    const roof = peak && bw && ai ? Math.min(peak, ai * bw) : null;
    let fails = 0;
    for (const v of Object.values(obj(r.failures))) fails += pos(v) || 0;
    return {
      intensity: ai, roof_gflops: roof, failures: fails,
      pct_peak: peak && g !== null ? (100 * g) / peak : null,
      pct_roof: roof && g !== null ? (100 * g) / roof : null,
      speedup: pos(r.first_ms) && pos(r.best_ms) ? r.first_ms / r.best_ms : null,
    };
  }

  // ---- sections ----
  function header() {
    const meta = el('p', { class: 'meta' },
      'Log ', el('code', { text: str(D.log) || '(unknown)' }),
      ' · generated ' + (str(D.generated) || '(unknown)') +
      ' · Temper ' + (str(D.temper_version) || '(unknown version)'));
    const nav = el('nav', null, ...[['machines', 'Machines'], ['workloads', 'Workloads'], ['sweeps', 'Sweeps'],
      ['models', 'Models'], ['compare', 'Across machines'],
      ['roofline', 'Roofline'], ['failures', 'Failures'], ['details', 'Per workload']]
      .map(([id, t]) => el('a', { href: '#' + id, text: t })));
    return el('header', null, el('h1', { text: str(D.title) || 'Temper tuning report' }), meta, nav);
  }

  function machinesSection() {
    if (!machines.length) return section('machines', 'Machines', note('The log has no machines: it holds no records.'));
    const rows = machines.map((m, i) => {
      const id = num(m.id) === null ? i : m.id;
      const p = probeOf(id) || {};
      return {
        machine: mLabel(id), target: m.target, cpu: m.cpu_model, cores: m.cores, compiler: m.compiler,
        device: m.device, simd: m.simd, fp32_gflops: p.fp32_gflops, int8_gops: p.int8_gops,
        bandwidth_gbs: p.bandwidth_gbs, probe_date: probeOf(id) ? str(p.date) : 'not probed',
      };
    });
    return section('machines', 'Machines', table('machines-table', 'machines', [
      { key: 'machine', label: 'Machine' }, { key: 'target', label: 'Target' }, { key: 'cpu', label: 'CPU' },
      { key: 'cores', label: 'Cores', num: fmt.int }, { key: 'compiler', label: 'Compiler' },
      { key: 'device', label: 'Device' }, { key: 'simd', label: 'SIMD' },
      { key: 'fp32_gflops', label: 'fp32 peak GFLOP/s', num: fmt.g1 },
      { key: 'int8_gops', label: 'int8 peak GOP/s', num: fmt.g1 },
      { key: 'bandwidth_gbs', label: 'Bandwidth GB/s', num: fmt.g1 }, { key: 'probe_date', label: 'Probe date' },
    ], rows));
  }

  function workloadsSection() {
    const rows = [];
    for (const w of workloads) {
      for (const r of resultsOf(w)) {
        rows.push(Object.assign({
          workload: wName(w), op: w.op, machine: mLabel(r.machine), records: r.records, valid: r.valid,
          best_ms: r.best_ms, median_ms: r.median_ms, gflops: r.best_gflops,
        }, metrics(w, r)));
      }
    }
    if (!rows.length) return section('workloads', 'Workloads', note('The log has no tuning records, so there are no workloads to show.'));
    return section('workloads', 'Workloads', table('workloads-table', 'workloads', [
      { key: 'workload', label: 'Workload' }, { key: 'op', label: 'Op' }, { key: 'machine', label: 'Machine' },
      { key: 'records', label: 'Records', num: fmt.int }, { key: 'valid', label: 'Valid', num: fmt.int },
      { key: 'failures', label: 'Failures', num: fmt.int }, { key: 'best_ms', label: 'Best ms', num: fmt.ms },
      { key: 'median_ms', label: 'Median ms', num: fmt.ms }, { key: 'gflops', label: 'GFLOP/s', num: fmt.g1 },
      { key: 'pct_peak', label: '% fp32 peak', num: fmt.pct },
      { key: 'intensity', label: 'Intensity FLOP/byte', num: fmt.ai },
      { key: 'roof_gflops', label: 'Roofline GFLOP/s', num: fmt.g1 }, { key: 'pct_roof', label: '% roofline', num: fmt.pct },
      { key: 'speedup', label: 'Speed-up vs first', num: fmt.x },
    ], rows));
  }

  // Sweeps (temper sweep): each entry's contenders timed side by side; tuned/x < 1: Temper tuned is faster.
  function sweepsSection() {
    const rows = [];
    for (const e of arr(D.sweeps).map(obj)) {
      const cs = arr(e.contenders).map(obj);
      const tuned = cs.find((c) => c.contender === 'temper-tuned' && c.status === 'ok');
      const peak = pos((probeOf(e.machine) || {}).fp32_gflops);
      for (const c of cs) {
        const ok = c.status === 'ok' && pos(c.seconds) !== null;
        const gflops = ok && pos(e.flops) ? e.flops / c.seconds / 1e9 : null;
        rows.push({
          sweep: e.sweep, entry: e.entry, kind: e.entry_kind, machine: mLabel(e.machine), date: e.date,
          contender: c.contender, status: c.status, ms: ok ? c.seconds * 1e3 : null,
          ratio: ok && tuned ? tuned.seconds / c.seconds : null, gflops,
          pct_peak: gflops !== null && peak ? 100 * gflops / peak : null,
          rounds: arr(c.rounds).length || null, what: ok ? str(c.description) : str(c.why),
        });
      }
    }
    if (!rows.length) {
      return section('sweeps', 'Sweeps', note('No sweep results in this log: `temper sweep SUITE --db LOG` makes them.'));
    }
    return section('sweeps', 'Sweeps: tuned, default and baselines side by side', note(
      'tuned/x: Temper tuned\'s median time over the contender\'s, taken in the same interleaved rounds (below 1: Temper tuned is faster).'),
    table('sweeps-table', 'sweeps', [
      { key: 'sweep', label: 'Sweep' }, { key: 'entry', label: 'Entry' }, { key: 'kind', label: 'Kind' },
      { key: 'machine', label: 'Machine' }, { key: 'date', label: 'Date' }, { key: 'contender', label: 'Contender' },
      { key: 'status', label: 'Status' }, { key: 'ms', label: 'Median ms', num: fmt.ms },
      { key: 'ratio', label: 'tuned/x', num: (v) => v.toFixed(3) }, { key: 'gflops', label: 'GFLOP/s', num: fmt.g1 },
      { key: 'pct_peak', label: '% fp32 peak', num: fmt.pct }, { key: 'rounds', label: 'Rounds', num: fmt.int },
      { key: 'what', label: 'What ran / why not' },
    ], rows));
  }

  // Models swept: the log's estimate (each task's best time by how often the model runs it)
  // beside the measured latency, and each task's share of the estimate.
  function modelsSection() {
    const summary = [];
    const tasks = [];
    for (const e of arr(D.sweeps).map(obj)) {
      if (e.entry_kind !== 'model') continue;
      const tuned = arr(e.contenders).map(obj).find((c) => c.contender === 'temper-tuned');
      const d = obj((tuned || {}).details);
      if (!tuned || !arr(d.tasks).length) continue;
      const measured = tuned.status === 'ok' ? tuned.seconds * 1e3 : null;
      const est = num(d.estimated_ms);
      summary.push({ model: e.entry, machine: mLabel(e.machine), date: e.date, tasks: arr(d.tasks).length,
        estimated_ms: est, measured_ms: measured, ratio: est !== null && pos(measured) ? est / measured : null });
      for (const t of arr(d.tasks).map(obj)) {
        const total = num(t.best_ms) !== null && num(t.count) !== null ? t.best_ms * t.count : null;
        tasks.push({ model: e.entry, machine: mLabel(e.machine), workload: t.workload, count: t.count,
          best_ms: t.best_ms, total_ms: total, share: total !== null && pos(est) ? 100 * total / est : null });
      }
    }
    if (!summary.length) {
      return section('models', 'Models', note('No swept model with its tasks in this log: a [[model]] entry of `temper sweep` adds one.'));
    }
    return section('models', 'Models: the log\'s estimate against the measured latency',
      table('models-table', 'models', [
        { key: 'model', label: 'Model' }, { key: 'machine', label: 'Machine' }, { key: 'date', label: 'Date' },
        { key: 'tasks', label: 'Tasks', num: fmt.int }, { key: 'estimated_ms', label: 'Estimated ms', num: fmt.ms },
        { key: 'measured_ms', label: 'Measured ms (tuned)', num: fmt.ms },
        { key: 'ratio', label: 'Estimate / measured', num: (v) => v.toFixed(3) },
      ], summary),
      table('model-tasks-table', 'model-tasks', [
        { key: 'model', label: 'Model' }, { key: 'machine', label: 'Machine' }, { key: 'workload', label: 'Task' },
        { key: 'count', label: 'Runs per inference', num: fmt.int }, { key: 'best_ms', label: 'Best ms', num: fmt.ms },
        { key: 'total_ms', label: 'Runs x best ms', num: fmt.ms }, { key: 'share', label: '% of estimate', num: fmt.pct },
      ], tasks));
  }

  function compareSection() {
    if (machines.length < 2) {
      return section('compare', 'Across machines', note('Fewer than two machines in the log: nothing to compare.'));
    }
    if (!workloads.length) return section('compare', 'Across machines', note('No workloads to compare.'));
    const ids = machines.map((m, i) => (num(m.id) === null ? i : m.id));
    const cols = [{ key: 'workload', label: 'Workload' }]
      .concat(ids.map((id) => ({ key: 'gflops_' + id, label: mLabel(id) + ' GFLOP/s', num: fmt.g1 })))
      .concat(ids.slice(1).map((id) => ({ key: 'ratio_' + id, label: mLabel(id) + ' / ' + mLabel(ids[0]), num: fmt.x })));
    const rows = workloads.map((w) => {
      const row = { workload: wName(w) };
      for (const r of resultsOf(w)) if (mIndex.has(r.machine)) row['gflops_' + r.machine] = num(r.best_gflops);
      const base = pos(row['gflops_' + ids[0]]);
      for (const id of ids.slice(1)) {
        const g = num(row['gflops_' + id]);
        row['ratio_' + id] = base && g !== null ? g / base : null;
      }
      return row;
    });
    return section('compare', 'Across machines', table('machines-compare-table', 'machines-compare', cols, rows));
  }

  function rooflineSection() {
    if (!machines.length) return section('roofline', 'Roofline', note('No machines, so no roofline.'));
    const grid = el('div', { class: 'charts' });
    const notes = [];
    machines.forEach((m, i) => {
      const id = num(m.id) === null ? i : m.id;
      const p = probeOf(id);
      if (!p) {
        notes.push(el('p', { class: 'note' }, mLabel(id) + ': no probe: run ',
          el('code', { text: 'temper db probe --db ' + (str(D.log) || 'LOG') }), ' on that machine.'));
        return;
      }
      const peak = pos(p.fp32_gflops);
      const bw = pos(p.bandwidth_gbs);
      if (!peak || !bw) {
        notes.push(note(mLabel(id) + ': its probe lacks the fp32 peak or the bandwidth, so no roofline.'));
        return;
      }
      const pts = [];
      for (const w of workloads) {
        for (const r of resultsOf(w)) {
          const ai = pos(w.flops) && pos(w.bytes) ? w.flops / w.bytes : null;
          const g = pos(r.best_gflops);
          if (r.machine === id && ai && g) pts.push({ x: ai, y: g, w: wName(w) });
        }
      }
      // Span the roof a little beyond the ridge point and every workload, so points never sit on the edge.
      const ridge = peak / bw;
      const xs = pts.map((q) => q.x).concat(ridge);
      const lo = Math.min.apply(null, xs) / 4;
      const hi = Math.max.apply(null, xs) * 4;
      const roof = [{ x: lo, y: lo * bw }, { x: ridge, y: peak }, { x: hi, y: peak }];
      const datasets = [
        { label: 'roof (' + fmt.g1(bw) + ' GB/s, ' + fmt.g1(peak) + ' GFLOP/s)', data: roof, roof: true,
          showLine: true, pointRadius: 0, borderColor: '#6b7280', borderWidth: 2, borderDash: [6, 3] },
        { label: 'best per workload', data: pts, pointRadius: 5, pointHoverRadius: 7,
          backgroundColor: mColor(id), borderColor: mColor(id) },
      ];
      const tooltip = { callbacks: { label: (c) => (c.dataset.roof
        ? 'roof: ' + fmt.g1(c.parsed.y) + ' GFLOP/s at ' + fmt.ai(c.parsed.x) + ' FLOP/byte'
        : [c.raw.w, fmt.g1(c.raw.y) + ' GFLOP/s', fmt.ai(c.raw.x) + ' FLOP/byte']) } };
      grid.append(chartBox('roofline-' + id, { type: 'scatter', data: { datasets }, options: options(
        'Roofline: ' + mLabel(id),
        { x: axis('arithmetic intensity (FLOP/byte)', { type: 'logarithmic' }),
          y: axis('GFLOP/s', { type: 'logarithmic' }) }, tooltip) }));
    });
    const caveat = note('The roof\'s slope is the memory bandwidth the probe measured over an array far larger ' +
      'than the caches; a kernel timed with its data in the caches (a lone workload is timed warm) can rise above it.');
    return section('roofline', 'Roofline', grid.childElementCount ? caveat : null, grid.childElementCount ? grid : null,
      ...notes);
  }

  function failuresSection() {
    if (!failures.length) return section('failures', 'Failures', note('No failed measurements in this log.'));
    const totals = new Map();
    for (const f of failures) totals.set(str(f.kind), (totals.get(str(f.kind)) || 0) + f.count);
    const kindsSorted = Array.from(totals.keys()).sort((a, b) => totals.get(b) - totals.get(a)); // commonest first
    const mids = Array.from(new Set(failures.map((f) => f.machine)));
    const datasets = mids.map((id) => ({
      label: mLabel(id), backgroundColor: mColor(id),
      data: kindsSorted.map((k) => failures.filter((f) => f.machine === id && str(f.kind) === k)
        .reduce((s, f) => s + f.count, 0)),
    }));
    const rows = failures.map((f) => ({ machine: mLabel(f.machine), kind: str(f.kind), count: f.count }));
    return section('failures', 'Failures',
      el('div', { class: 'charts' }, chartBox('failures', { type: 'bar', data: { labels: kindsSorted, datasets },
        options: options('Failed measurements by kind', { x: axis('failure kind'), y: axis('count', { beginAtZero: true, ticks: { precision: 0 } }) }) }),
      table('failures-table', 'failures', [{ key: 'machine', label: 'Machine' }, { key: 'kind', label: 'Kind' },
        { key: 'count', label: 'Count', num: fmt.int }], rows)));
  }

  // Best-so-far GFLOP/s against trial number (col 0) or seconds (col 1); one line per tuner.
  function curveChart(name, title, curve, col, xTitle) {
    const datasets = Object.keys(curve).map((k) => ({
      label: k, borderColor: kColor(k), backgroundColor: kColor(k), stepped: 'after', pointRadius: 2, borderWidth: 2,
      data: arr(curve[k]).filter((p) => Array.isArray(p) && num(p[col]) !== null && num(p[2]) !== null)
        .map((p) => ({ x: p[col], y: p[2] })),
    })).filter((d) => d.data.length);
    if (!datasets.length) return null;
    return chartBox(name, { type: 'line', data: { datasets }, options: options(title,
      { x: axis(xTitle, { type: 'linear' }), y: axis('best GFLOP/s so far', { beginAtZero: true }) },
      { mode: 'nearest', intersect: false }) });
  }

  // The fastest schedules: a floating bar [min, max] per rank, the median as a dot, bars coloured by search (kind and tuner).
  function spreadChart(name, title, spread) {
    const sp = spread.filter((s) => num(s.min_ms) !== null && num(s.max_ms) !== null);
    if (!sp.length) return null;
    // One bar dataset per search (null elsewhere, grouped: false keeps bars centred) so the legend names the kinds.
    const kindOf = (s) => str(s.kind) || 'unknown';
    const datasets = Array.from(new Set(sp.map(kindOf))).map((k) => ({
      type: 'bar', label: k + ' min–max', grouped: false, minBarLength: 2, backgroundColor: kColor(k) + '99',
      data: sp.map((s) => (kindOf(s) === k ? [s.min_ms, s.max_ms] : null)),
    })).concat([
      { type: 'line', label: 'median ms', data: sp.map((s) => num(s.median_ms)), showLine: false,
        pointRadius: 4, backgroundColor: '#111827', borderColor: '#111827' },
    ]);
    const tooltip = { mode: 'index', intersect: false, filter: (c) => c.raw != null, callbacks: {
      afterTitle: (items) => {
        const s = items.length ? sp[items[0].dataIndex] : null;
        if (!s) return '';
        return (str(s.kind) || 'unknown kind') + (num(s.repeats) !== null ? ', ' + s.repeats + ' repeats' : '');
      },
      label: (c) => (Array.isArray(c.raw)
        ? 'min ' + fmt.ms(c.raw[0]) + ' – max ' + fmt.ms(c.raw[1]) + ' ms'
        : 'median ' + (num(c.raw) === null ? '?' : fmt.ms(c.raw)) + ' ms'),
    } };
    return chartBox(name, { type: 'bar', data: { labels: sp.map((s, i) => '#' + (num(s.rank) === null ? i + 1 : s.rank)), datasets },
      options: options(title, { x: axis('rank (fastest first)'), y: axis('ms', { beginAtZero: false }) }, tooltip) });
  }

  function detailsSection() {
    if (!workloads.length) return section('details', 'Per workload', note('No workloads in the log.'));
    const blocks = workloads.map((w, wi) => {
      const wid = num(w.id) === null ? wi : w.id;
      const ai = pos(w.flops) && pos(w.bytes) ? w.flops / w.bytes : null;
      const facts = [str(w.op), pos(w.flops) ? fmt.g1(w.flops / 1e6) + ' MFLOP' : '',
        ai ? fmt.ai(ai) + ' FLOP/byte' : ''].filter(Boolean).join(' · ');
      const body = resultsOf(w).map((r) => {
        const fails = Object.keys(obj(r.failures)).filter((k) => pos(r.failures[k]))
          .map((k) => k + ' ' + r.failures[k]).join(', ');
        const line = [num(r.records) !== null ? r.records + ' records' : '', num(r.valid) !== null ? r.valid + ' valid' : '',
          num(r.best_ms) !== null ? 'best ' + fmt.ms(r.best_ms) + ' ms' : '',
          num(r.best_gflops) !== null ? fmt.g1(r.best_gflops) + ' GFLOP/s' : '',
          fails ? 'failures: ' + fails : ''].filter(Boolean).join(' · ');
        const key = wid + '-' + r.machine;
        const curve = obj(r.curve);
        const charts = [
          curveChart('curve-trials-' + key, 'Tuning curve by trial', curve, 0, 'trial'),
          curveChart('curve-time-' + key, 'Tuning curve by wall time', curve, 1, 'seconds since first record'),
          spreadChart('spread-' + key, 'Fastest schedules (ms)', arr(r.spread).map(obj)),
        ].filter(Boolean);
        return el('div', { class: 'result' }, el('h3', { text: mLabel(r.machine) }), el('p', { class: 'meta', text: line }),
          charts.length ? el('div', { class: 'charts' }, ...charts) : note('No tuning curve or schedule spread recorded.'));
      });
      return el('details', { id: 'workload-' + wid, open: wi === 0 },
        el('summary', null, el('span', { class: 'wl', text: wName(w) }), ' ', el('span', { class: 'facts', text: facts })),
        ...(body.length ? body : [note('No results for this workload.')]));
    });
    return section('details', 'Per workload', ...blocks);
  }

  // ---- build, attach, then draw ----
  let made = 0;
  try {
    document.title = str(D.title) || 'Temper tuning report';
    document.body.append(el('main', null, header(), machinesSection(), workloadsSection(), sweepsSection(), modelsSection(),
      compareSection(),
      rooflineSection(), failuresSection(), detailsSection()));
    const C = window.Chart;
    if (typeof C !== 'function') {
      pending.forEach(([cv]) => cv.parentNode.replaceWith(note('Chart.js is missing from this page; charts not drawn.')));
    } else {
      C.defaults.font.family = getComputedStyle(document.body).fontFamily;
      for (const [canvas, config] of pending) {
        try {
          new C(canvas, config); // eslint-disable-line no-new
          made++;
        } catch (e) {
          canvas.parentNode.replaceWith(note('Chart failed: ' + (e && e.message)));
        }
      }
      // Charts made inside a closed <details> are 0×0; redraw them at full size when it opens.
      document.querySelectorAll('details').forEach((d) => d.addEventListener('toggle', () => {
        if (d.open) d.querySelectorAll('canvas').forEach((cv) => { const ch = C.getChart(cv); if (ch) ch.resize(); });
      }));
    }
  } catch (e) {
    document.body.dataset.error = str(e && e.message);
    document.body.append(note('The report could not be built: ' + str(e && e.message)));
  }
  document.body.dataset.rendered = String(made);
})();
