package replay

import "html/template"

// htmlPage is the page WriteHTML fills in: the styles, the timeline as JSON and the script that draws it.
//
// The picture is one <canvas> (pods x virtual time) with a few HTML labels over it (rows, ticks, edits):
// a 1000-pod rollout of thousands of syncs is thousands of rectangles on a canvas, not millions of DOM
// cells. The x axis is virtual time, plus a small slot per sync (at most a quarter of the width, at most
// 6 px each) so that syncs at one instant stay side by side and clickable when there are few of them; at
// scale a slot is a fraction of a pixel and the axis is plain time. Every sync at an instant is also
// listed in the details.
var htmlPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — ordinal replay</title>
<style>
html, body { margin: 0; }
body { font: 13px/1.35 system-ui, sans-serif; color: #222; padding: 10px 14px 0; box-sizing: border-box; }
h1 { font-size: 1.25em; margin: 0; }
.sub div { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sub, .hint { color: #555; }
.outcome { font-weight: bold; }
.outcome.complete { color: #070; } .outcome.stuck, .outcome.limit { color: #b00; } .outcome.partitioned, .outcome.waiting, .outcome.partial { color: #a60; }
.legend { margin: 3px 0; }
.legend span { white-space: nowrap; margin-right: 10px; }
.legend canvas { vertical-align: middle; margin-right: 3px; border: 1px solid #ccc; }
#main { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 4px; }
#overview { position: relative; flex: none; user-select: none; }
#plot { position: absolute; cursor: crosshair; }
.rlabel, .tick, .elabel, .empty { position: absolute; white-space: nowrap; font-size: 11px; line-height: 14px; }
.rlabel { font-family: ui-monospace, monospace; text-align: right; }
.tick { color: #444; }
.edit { position: absolute; border-left: 2px solid #222; cursor: pointer; }
.elabel { padding: 0 2px; background: rgba(255,255,255,.9); cursor: pointer; }
.elabel.num { font-weight: bold; }
.elabel:hover { background: #ffc; }
.empty { color: #555; font-size: 13px; line-height: 18px; text-align: center; font-style: italic; }
#sel { position: absolute; border: 1px solid #000; background: rgba(0,0,0,.08); display: none; pointer-events: none; }
#tip { position: absolute; display: none; pointer-events: none; background: #fff; border: 1px solid #999; padding: 3px 6px;
  font-size: 12px; white-space: pre; box-shadow: 0 1px 4px rgba(0,0,0,.2); z-index: 2; }
#side { flex: 1 1 300px; min-width: 260px; overflow: auto; box-sizing: border-box; }
#side button { font-size: 12px; margin: 0 3px 3px 0; }
#instant button.cur { font-weight: bold; }
#view { color: #555; margin: 2px 0 4px; }
#edits { margin-top: 6px; font-size: 12px; }
#edits .e { cursor: pointer; padding-left: 2.2em; text-indent: -2.2em; overflow-wrap: anywhere; }
#edits .e:hover { background: #ffc; }
#edits b { display: inline-block; width: 2.2em; text-indent: 0; text-align: right; padding-right: .4em; box-sizing: border-box; }
#detail { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; background: #f6f6f6; padding: 6px 8px; margin: 0; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div class="sub" id="subtitle"></div>
<div class="legend" id="legend"></div>
<div class="hint"><span id="render-stats"></span> · drag to zoom (across rows too), double-click or “fit all” to see everything, click for a sync's details, ←/→ step through syncs</div>
<div id="main">
  <div id="overview">
    <canvas id="plot"></canvas>
    <div id="sel"></div>
    <div id="tip"></div>
  </div>
  <div id="side">
    <div><button id="fit">fit all</button><button id="prev">◀ sync</button><button id="next">sync ▶</button></div>
    <div id="view"></div>
    <div id="instant"></div>
    <pre id="detail"></pre>
    <div id="edits"></div>
  </div>
</div>
<script type="application/json" id="timeline-data">{{.Data}}</script>
<script>
(function () {
  'use strict';
  const d = JSON.parse(document.getElementById('timeline-data').textContent);
  const $ = id => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- the data, decoded ----
  const n = d.steps.length;
  const t = d.steps.map(s => s.ms);
  const status = [];
  d.steps.forEach((s, i) => { status[i] = s.st !== undefined ? s.st : status[i - 1]; });
  const rows = d.pods;
  const extra = new Int32Array(n); // syncs up to i that happened at the same instant as the sync before
  for (let i = 1; i < n; i++) extra[i] = extra[i - 1] + (t[i] === t[i - 1] ? 1 : 0);
  const edits = [];   // one per user event: {step, msg}
  const requeues = []; // steps a requeue triggered
  d.steps.forEach((s, i) => {
    (s.world || []).forEach(w => { if (w[0] === 'user') edits.push({step: i, msg: w[1]}); });
    if ((s.trig || []).indexOf('requeue') >= 0) requeues.push(i);
  });
  // The run of a row in force at step i, or null.
  function runAt(row, i) {
    const r = row.runs;
    let lo = 0, hi = r.length - 1, k = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (r[m][0] <= i) { k = m; lo = m + 1; } else hi = m - 1; }
    return k >= 0 && r[k].length > 1 ? r[k] : null;
  }
  function runEnd(row, k) { return k + 1 < row.runs.length ? row.runs[k + 1][0] : n; }
  // The first and last step of the instant step i belongs to.
  function instantOf(i) {
    let a = i, b = i;
    while (a > 0 && t[a - 1] === t[i]) a--;
    while (b + 1 < n && t[b + 1] === t[i]) b++;
    return [a, b];
  }

  // ---- colours: one per revision, lightened by state, darkened while terminating ----
  // Every revision has a colour of its own: the ten of the palette, then hues a golden angle apart (at
  // three lightnesses), skipping any too close to a colour already taken or to the neutral ones.
  const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#17becf', '#bcbd22'];
  const neutral = '#707070', unknown = '#888888', failed = '#b00000', succeeded = '#9a9a9a';
  function rgb(hex) { return [1, 3, 5].map(k => parseInt(hex.substr(k, 2), 16)); }
  function hex(c) { return '#' + c.map(v => v.toString(16).padStart(2, '0')).join(''); }
  function mix(c, to, f) { return c.map((v, k) => Math.round(v + (to[k] - v) * f)); }
  function hsl(h, s, l) {
    const a = s * Math.min(l, 1 - l), f = k => { const m = (k + h / 30) % 12; return l - a * Math.max(-1, Math.min(m - 3, 9 - m, 1)); };
    return hex([0, 8, 4].map(k => Math.round(f(k) * 255)));
  }
  function distance(a, b) { const x = rgb(a), y = rgb(b); return Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]); }
  const revColours = [], revColour = {};
  let cand = 0, far = 80;
  d.revisions.forEach((r, i) => {
    let c = i < palette.length ? palette[i] : '';
    for (let tries = 0; !c; tries++) {
      if (tries && tries % 40 === 0) far = Math.max(1, far * .75); // crowded: accept closer colours
      const h = (20 + cand * 137.508) % 360, l = [.45, .62, .33][cand % 3], s = [.7, .55][Math.floor(cand / 3) % 2];
      cand++;
      const x = hsl(h, s, l);
      if (revColours.concat([neutral, unknown, failed, succeeded]).every(y => distance(x, y) >= far)) c = x;
    }
    revColours.push(c);
    revColour[r.label] = c;
  });
  const fade = {Ready: 0, Running: .5, Pending: .78, '-': .78};
  const fills = {};
  // The fill of a pod in state, of a revision whose colour is base.
  function fill(state, base, term) {
    const key = state + '/' + base + '/' + term;
    if (!fills[key]) {
      let c;
      if (state === 'Failed') c = rgb(failed);
      else if (state === 'Succeeded') c = rgb(succeeded);
      else c = mix(rgb(base), [255, 255, 255], state in fade ? fade[state] : .6);
      if (term) c = mix(c, [0, 0, 0], .5);
      fills[key] = hex(c);
    }
    return fills[key];
  }
  const colourOf = label => revColour[label] || unknown;
  function count(k, one, many) { return k + ' ' + (k === 1 ? one : many || one + 's'); }

  // ---- header ----
  $('title').textContent = d.scenario;
  const sub = $('subtitle');
  if (d.description) sub.appendChild(el('div', '', d.description)).title = d.description;
  const line = sub.appendChild(el('div'));
  line.appendChild(el('span', 'outcome ' + d.outcome.result, d.outcome.result + ' after ' + d.outcome.duration)).title = d.outcome.summary;
  line.appendChild(document.createTextNode(': ' + d.outcome.summary + ' · ' + d.model + ' kubelet model, start ' + d.start));
  line.title = d.outcome.summary;
  const legend = $('legend');
  // The legend's swatches are drawn by the picture's own colours.
  function swatch(text, paint) {
    const item = legend.appendChild(el('span')), c = item.appendChild(el('canvas'));
    c.width = 14; c.height = 12;
    paint(c.getContext('2d'));
    item.appendChild(document.createTextNode(text));
  }
  const solid = colour => g => { g.fillStyle = colour; g.fillRect(0, 0, 14, 12); };
  d.revisions.forEach(r => swatch(r.label + ' ' + r.name, solid(fill('Ready', colourOf(r.label), 0))));
  // The states' swatches are a neutral grey, shaded as a revision's colour is: no revision's colour.
  const stateColours = [];
  [['Ready', 0, 'Ready'], ['Running', 0, 'Running, not Ready'], ['Pending', 0, 'Pending'], ['Failed', 0, 'Failed'],
   ['Ready', 1, 'terminating']].forEach(x => {
    const c = fill(x[0], neutral, x[1]);
    stateColours.push(c);
    swatch(x[2], solid(c));
  });
  swatch('user edit', g => { g.fillStyle = '#222'; g.fillRect(6, 0, 2, 12); });
  swatch('requeue', g => { g.fillStyle = '#e07000'; g.beginPath(); g.moveTo(3, 3); g.lineTo(11, 3); g.lineTo(7, 10); g.fill(); });

  // The edits, numbered as their labels are.
  if (edits.length) {
    const box = $('edits');
    box.appendChild(el('div', '', count(edits.length, 'user edit') + ':'));
    edits.forEach((e, k) => {
      const item = box.appendChild(el('div', 'e'));
      item.appendChild(el('b', '', String(k + 1)));
      item.appendChild(document.createTextNode('+' + fmt(t[e.step]) + ' (sync #' + e.step + ') ' + e.msg));
      item.onclick = () => select(e.step);
    });
  }

  // ---- view and layout ----
  const overview = $('overview'), canvas = $('plot'), ctx = canvas.getContext('2d');
  const full = {a: 0, b: n - 1, r0: 0, r1: rows.length - 1};
  let view = Object.assign({}, full);
  let selected = n ? n - 1 : -1;
  const L = {};     // layout of the current draw
  let labelEls = []; // drawn text labels, checked for wrapping
  const stats = {runs: 0};

  // x of each sync of the view: its time, plus a slot of g px for each earlier sync that shared its
  // instant with the one before (extra[i] counts them), so that syncs at one instant stand side by side.
  // The slots take at most a tenth of the width, none when they would be under 2 px: at scale the axis
  // is plain time. The last sync's state gets a visible stretch at the end.
  function layoutX(W) {
    const a = view.a, cnt = view.b - view.a + 1, T = t[view.b] - t[a], extras = extra[view.b] - extra[a];
    const tail = Math.min(W / 4, Math.max(8, W * .02));
    let g = T > 0 ? (extras ? Math.min(12, W * .1 / extras) : 0) : (W - tail) / Math.max(extras, 1);
    if (T > 0 && g < 2) g = 0; // too thin to point at: plain time, the details list the instant's syncs
    const k = T > 0 ? (W - tail - extras * g) / T : 0;
    const xs = new Float64Array(cnt + 1);
    for (let i = 0; i < cnt; i++) xs[i] = (t[a + i] - t[a]) * k + (extra[a + i] - extra[a]) * g;
    xs[cnt] = W;
    Object.assign(L, {W: W, g: g, k: k, xs: xs});
  }
  function xOfStep(i) { return L.xs[i - view.a]; }
  // x of a virtual time in the view: the time, plus the slots of the syncs before it.
  function xOfTime(ms) {
    let lo = view.a, hi = view.b + 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (t[m] < ms) lo = m + 1; else hi = m; }
    return (ms - t[view.a]) * L.k + (lo > view.a ? extra[lo - 1] - extra[view.a] : 0) * L.g;
  }
  function stepAtX(x) {
    const xs = L.xs;
    let lo = 0, hi = xs.length - 2;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (xs[m] <= x) lo = m; else hi = m - 1; }
    return view.a + lo;
  }
  function rowAtY(y) {
    const r = view.r0 + Math.floor((y - L.stripH) / L.rowH);
    return r >= view.r0 && r <= view.r1 ? r : -1;
  }

  function fmt(ms) {
    if (ms === 0) return '0s';
    let s = Math.round(ms) / 1000, out = '';
    const h = Math.floor(s / 3600); s -= h * 3600;
    const m = Math.floor(s / 60); s = Math.round((s - m * 60) * 1000) / 1000;
    if (h) out += h + 'h';
    if (m) out += m + 'm';
    if (s) out += s + 's';
    return out;
  }
  // A tick every "nice" interval, at least ~80px apart.
  const nice = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5,
    36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
  function ticks() {
    const T = t[view.b] - t[view.a];
    if (!(T > 0) || !(L.k > 0)) return n ? [t[view.a]] : [];
    const step = nice.find(s => s * L.k >= 80) || nice[nice.length - 1];
    const out = [];
    for (let v = Math.ceil(t[view.a] / step) * step; v <= t[view.b]; v += step) out.push(v);
    return out;
  }

  // Labels: a name every Nth row, N nice, so that labels are at least a line apart.
  function rowEvery(rowH) {
    for (const k of [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000]) if (k * rowH >= 14) return k;
    return Math.ceil(14 / rowH);
  }

  function truncate(s, max) {
    if (s.length <= max) return s;
    const head = Math.floor(max * .3);
    return s.slice(0, head) + '…' + s.slice(s.length - (max - head - 1));
  }

  function render() {
    overview.querySelectorAll('.rlabel, .tick, .edit, .elabel, .empty').forEach(e => e.remove());
    labelEls = [];
    const avail = $('main').clientWidth;
    const beside = avail >= 900; // the details go beside the picture when there is room, below otherwise
    const OW = beside ? avail - 12 - Math.max(300, Math.round(avail * .26)) : avail;
    const top = overview.getBoundingClientRect().top + window.scrollY;
    const OH = Math.max(220, document.documentElement.clientHeight - top - 8);
    overview.style.width = OW + 'px';
    $('side').style.maxHeight = beside ? OH + 'px' : '';

    // gutter: as wide as the longest name (the labels are monospace)
    const probe = overview.appendChild(el('div', 'rlabel', 'Mg'));
    const lineH = probe.offsetHeight;
    probe.textContent = rows.reduce((m, r) => r.name.length > m.length ? r.name : m, '');
    const gutter = Math.ceil(probe.offsetWidth) + 6;
    probe.remove();
    const W = Math.max(100, OW - gutter - 4);
    if (n) layoutX(W);

    // edits: a line per user event, each identified by a label above the picture. Edits are numbered as
    // in the list beside the picture. A label is the edit's number and text, in the first lane where it
    // overlaps no label and no other edit's line crosses it; the lanes take at most a quarter of the
    // height. When the labels do not all fit they are the numbers alone; when even those do not fit, one
    // row of numbers above the lines, neighbours that would overlap sharing a label ("4–7").
    const laneH = lineH + 2;
    const maxLanes = Math.max(1, Math.floor(OH / 4 / laneH));
    const vis = []; // the edits in the view: {e, k (its index), x}
    edits.forEach((e, k) => { if (n && e.step >= view.a && e.step <= view.b) vis.push({e: e, k: k, x: xOfStep(e.step)}); });
    const meter = overview.appendChild(el('span', 'elabel'));
    meter.style.visibility = 'hidden';
    const widthOf = (text, cls) => { meter.className = 'elabel ' + cls; meter.textContent = text; return meter.offsetWidth; };
    function pack(cls, textOf) {
      const ends = [], lines = [], out = []; // ends: the right end of each lane's last label; lines: {x, lane}
      for (const v of vis) {
        const text = textOf(v), w = widthOf(text, cls), x = v.x;
        const flip = x + 3 + w > W && x - 3 - w >= 0;
        const l = flip ? x - 3 - w : x + 3, r = l + w;
        let lane = -1;
        for (let j = 0; j < maxLanes && j <= ends.length && lane < 0; j++) {
          if (j < ends.length && ends[j] + 4 > l) continue;
          let ok = true;
          for (let q = j + 1; q < ends.length; q++) if (ends[q] >= x - 2) ok = false; // this line would cross a label below
          for (let p = lines.length - 1; p >= 0 && lines[p].x >= l - 2; p--) if (lines[p].lane <= j && lines[p].x <= r + 2) ok = false; // a line crosses this label
          if (ok) lane = j;
        }
        if (lane < 0) return null;
        if (lane === ends.length) ends.push(r); else ends[lane] = r;
        lines.push({x: x, lane: lane});
        v.top = lane;
        out.push({first: v.k, last: v.k, step: v.e.step, text: text, l: l, lane: lane});
      }
      return {cls: cls, labels: out, lanes: ends.length};
    }
    function merged() {
      const out = [], text = g => g.first === g.last ? String(g.first + 1) : (g.first + 1) + '–' + (g.last + 1);
      for (const v of vis) {
        const g = out[out.length - 1];
        v.top = 1;
        if (g && v.x - 1 < g.l + g.w + 4) { g.last = v.k; g.w = widthOf(text(g), 'num'); }
        else out.push({first: v.k, last: v.k, step: v.e.step, l: Math.max(0, v.x - 1), w: widthOf(String(v.k + 1), 'num'), lane: 0});
      }
      // the last labels move left to stay in the picture, taking in the ones they reach
      for (let i = out.length - 1; i >= 0; i--) {
        const g = out[i], p = out[i - 1];
        if (g.l + g.w <= W) break;
        g.l = Math.max(0, W - g.w);
        if (p && p.l + p.w + 4 > g.l) { p.last = g.last; p.w = widthOf(text(p), 'num'); out.splice(i, 1); }
      }
      out.forEach(g => { g.text = text(g); });
      return {cls: 'num', labels: out, lanes: 1};
    }
    const numbered = edits.length > 1;
    const chosen = !vis.length ? {cls: '', labels: [], lanes: 0} :
      pack('', v => (numbered ? (v.k + 1) + ' ' : '') + truncate(v.e.msg, 56)) || pack('num', v => String(v.k + 1)) || merged();
    meter.remove();
    const reqH = requeues.length ? 9 : 0;
    const stripH = chosen.lanes * laneH + reqH + 2;
    const axisH = 6 + lineH;
    const nrows = view.r1 - view.r0 + 1;
    const plotH = Math.min(Math.max(40, OH - stripH - axisH), nrows > 0 ? nrows * 32 : 48); // bars, not slabs, for a few pods
    vis.forEach(v => {
      const m = overview.appendChild(el('div', 'edit'));
      m.title = (v.k + 1) + '. ' + v.e.msg + '  (sync #' + v.e.step + ', +' + fmt(t[v.e.step]) + ')';
      m.dataset.edit = v.k;
      m.onclick = ev => { ev.stopPropagation(); select(v.e.step); };
      m.style.left = (gutter + v.x - 1) + 'px';
      m.style.top = (v.top * laneH) + 'px';
      m.style.height = (stripH - v.top * laneH) + 'px';
    });
    chosen.labels.forEach(g => {
      const lab = overview.appendChild(el('div', 'elabel ' + chosen.cls, g.text));
      lab.style.left = (gutter + g.l) + 'px';
      lab.style.top = (g.lane * laneH) + 'px';
      lab.dataset.first = g.first;
      lab.dataset.last = g.last;
      lab.title = edits.slice(g.first, g.last + 1).map((e, j) => (g.first + j + 1) + '. ' + e.msg).join('\n');
      lab.onclick = ev => { ev.stopPropagation(); select(g.step); };
      labelEls.push(lab);
    });
    const rowH = plotH / Math.max(nrows, 1);
    Object.assign(L, {gutter: gutter, stripH: stripH, plotH: plotH, rowH: rowH, reqH: reqH, H: stripH + plotH + 6});

    // row labels
    const every = rowEvery(rowH);
    for (let r = view.r0; r <= view.r1; r++) {
      if ((r - view.r0) % every) continue;
      const lab = overview.appendChild(el('div', 'rlabel', rows[r].name));
      lab.style.right = (OW - gutter + 4) + 'px';
      lab.style.top = (stripH + (r - view.r0 + .5) * rowH - lineH / 2) + 'px';
      labelEls.push(lab);
    }
    if (nrows <= 0) {
      const msg = overview.appendChild(el('div', 'empty', rows.length ? 'no pods in this view' : 'no pods in this replay'));
      msg.style.left = gutter + 'px';
      msg.style.width = W + 'px';
      msg.style.top = (stripH + (plotH - 18) / 2) + 'px';
      labelEls.push(msg);
    }
    // tick labels
    if (n) ticks().forEach(v => {
      const lab = overview.appendChild(el('div', 'tick', (view.a === 0 && v === 0 ? '' : '+') + fmt(v)));
      const x = xOfTime(v), w = lab.offsetWidth;
      lab.style.left = (gutter + Math.min(Math.max(x - w / 2, -gutter), W - w + 4)) + 'px';
      lab.style.top = (stripH + plotH + 6) + 'px';
      lab.dataset.x = x;
      labelEls.push(lab);
    });

    // the canvas
    const dpr = window.devicePixelRatio || 1;
    overview.style.height = (stripH + plotH + axisH) + 'px';
    canvas.style.left = gutter + 'px';
    canvas.style.width = W + 'px';
    canvas.style.height = L.H + 'px';
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(L.H * dpr);
    draw();
    report(lineH);
  }

  function draw() {
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.W, L.H);
    stats.runs = 0;
    if (view.r1 < view.r0) { ctx.strokeStyle = '#ccc'; ctx.lineWidth = 1; ctx.strokeRect(.5, L.stripH + .5, L.W - 1, L.plotH - 1); }
    if (!n) return;
    const y0 = L.stripH, rowH = L.rowH, gap = rowH >= 5 ? 1 : 0;
    // Rows start and end on whole device pixels (no seams between thin rows); below a pixel a row
    // is still a pixel high, drawn over by the next.
    const snap = y => Math.round(y * dpr) / dpr;
    for (let r = view.r0; r <= view.r1; r++) {
      const row = rows[r];
      const top = snap(y0 + (r - view.r0) * rowH);
      const h = Math.max(snap(y0 + (r - view.r0 + 1) * rowH) - top - gap, 1 / dpr);
      row.runs.forEach((run, k) => {
        if (run.length < 2) return;
        const a = Math.max(run[0], view.a), b = Math.min(runEnd(row, k), view.b + 1);
        if (a >= b) return;
        ctx.fillStyle = fill(d.states[run[1]], colourOf(d.labels[run[2]]), run[3]);
        ctx.fillRect(L.xs[a - view.a], top, L.xs[b - view.a] - L.xs[a - view.a], h);
        stats.runs++;
      });
    }
    // ticks on the axis
    ctx.fillStyle = '#888';
    ticks().forEach(v => ctx.fillRect(Math.round(xOfTime(v)) - .5, y0 + L.plotH, 1, 5));
    // edits: a line through the pods
    ctx.fillStyle = 'rgba(0,0,0,.7)';
    edits.forEach(e => {
      if (e.step < view.a || e.step > view.b) return;
      const x = xOfStep(e.step);
      for (let y = 0; y < L.plotH; y += 6) ctx.fillRect(x - 1, y0 + y, 2, Math.min(3, L.plotH - y));
    });
    // requeues: small triangles under the edit flags
    ctx.fillStyle = '#e07000';
    stats.requeues = 0;
    requeues.forEach(i => {
      if (i < view.a || i > view.b) return;
      const x = xOfStep(i), y = L.stripH - L.reqH - 1;
      ctx.beginPath(); ctx.moveTo(x - 3.5, y + 1); ctx.lineTo(x + 3.5, y + 1); ctx.lineTo(x, y + 8); ctx.fill();
      stats.requeues++;
    });
    // the selected sync
    if (selected >= view.a && selected <= view.b) {
      const x0 = L.xs[selected - view.a], x1 = L.xs[selected - view.a + 1];
      const w = Math.max(x1 - x0, 2), x = x1 - x0 < 2 ? x0 - 1 : x0;
      ctx.fillStyle = 'rgba(0,0,0,.1)';
      ctx.fillRect(x, L.stripH, w, L.plotH);
      ctx.strokeStyle = '#000'; ctx.lineWidth = 1.5;
      ctx.strokeRect(x, L.stripH - 2, w, L.plotH + 4);
    }
  }

  // ---- details on demand ----
  function podsLine(i) {
    // neighbouring rows in the same state are one group: "0..499:B/Ready"
    const groups = [];
    rows.forEach(row => {
      const run = runAt(row, i);
      if (!run) return;
      const what = d.labels[run[2]] + '/' + d.states[run[1]] + (run[3] ? '/term' : '');
      const g = groups[groups.length - 1];
      if (g && g.what === what && g.last === row.o - 1) { g.last = row.o; g.count++; }
      else groups.push({first: row.o, last: row.o, what: what, count: 1});
    });
    const count = groups.reduce((s, g) => s + g.count, 0);
    return 'pods (' + count + '): ' + (groups.map(g => (g.first === g.last ? g.first : g.first + '..' + g.last) + ':' + g.what).join(' ') || '(none)');
  }
  function select(i) {
    if (i < 0 || i >= n) return;
    selected = i;
    const s = d.steps[i];
    const lines = ['sync #' + i + '  +' + fmt(t[i]) + (s.trig ? '  [' + s.trig.join(',') + ']' : '')];
    (s.world || []).forEach(w => lines.push('  . ' + w[0] + ': ' + w[1]));
    lines.push('  ' + podsLine(i));
    (s.act || ['(no writes)']).forEach(a => lines.push('  ' + a));
    if (s.rq) lines.push('  requeue after ' + s.rq + 's');
    if (s.err) lines.push('  error: ' + s.err);
    lines.push('  status: ' + status[i]);
    $('detail').textContent = lines.join('\n');
    const inst = $('instant'), ab = instantOf(i);
    inst.textContent = '';
    if (ab[1] > ab[0]) {
      inst.appendChild(document.createTextNode(count(ab[1] - ab[0] + 1, 'sync') + ' at +' + fmt(t[i]) + ': '));
      for (let j = ab[0]; j <= ab[1]; j++) {
        const b = inst.appendChild(el('button', j === i ? 'cur' : '', '#' + j));
        b.onclick = () => select(j);
      }
    }
    if (n) draw();
    if (ready) remember();
  }

  // ---- interaction ----
  const tip = $('tip'), sel = $('sel');
  function local(ev) {
    const r = canvas.getBoundingClientRect();
    return [Math.min(Math.max(ev.clientX - r.left, 0), L.W - .01), Math.min(Math.max(ev.clientY - r.top, 0), L.H)];
  }
  let drag = null;
  canvas.addEventListener('mousedown', ev => { if (n) { drag = local(ev); ev.preventDefault(); } });
  window.addEventListener('mousemove', ev => {
    if (!n) return;
    const p = local(ev);
    if (drag) {
      sel.style.display = 'block';
      sel.style.left = (L.gutter + Math.min(p[0], drag[0])) + 'px';
      sel.style.width = Math.abs(p[0] - drag[0]) + 'px';
      const rows2d = Math.abs(p[1] - drag[1]) >= 8;
      sel.style.top = (rows2d ? Math.min(p[1], drag[1]) : L.stripH) + 'px';
      sel.style.height = (rows2d ? Math.abs(p[1] - drag[1]) : L.plotH) + 'px';
      return;
    }
    if (ev.target !== canvas) { tip.style.display = 'none'; return; }
    const i = stepAtX(p[0]), r = rowAtY(p[1]), ab = instantOf(i), s = d.steps[i];
    const lines = [];
    if (r >= 0) {
      const run = runAt(rows[r], i);
      lines.push(rows[r].name + ': ' + (run ? 'revision ' + d.labels[run[2]] + ', ' + d.states[run[1]] + (run[3] ? ', terminating' : '') : 'no pod'));
    }
    lines.push('sync #' + i + ' at +' + fmt(t[i]) + (s.trig ? ' [' + s.trig.join(',') + ']' : ''));
    if (ab[1] > ab[0]) lines.push(count(ab[1] - ab[0] + 1, 'sync') + ' at this instant (#' + ab[0] + '–#' + ab[1] + ')');
    (s.world || []).filter(w => w[0] === 'user').forEach(w => lines.push('edit: ' + w[1]));
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    const ox = L.gutter + p[0] + 14, oy = p[1] + 14;
    tip.style.left = Math.max(0, Math.min(ox, overview.clientWidth - tip.offsetWidth - 2)) + 'px';
    tip.style.top = Math.max(0, Math.min(oy, overview.clientHeight - tip.offsetHeight - 2)) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  window.addEventListener('mouseup', ev => {
    if (!drag) return;
    const p = local(ev), from = drag;
    drag = null;
    sel.style.display = 'none';
    if (Math.abs(p[0] - from[0]) < 4 && Math.abs(p[1] - from[1]) < 4) { select(stepAtX(p[0])); return; }
    // From the sync in force at the left edge to the one in force at the right edge, and at least to the
    // next sync: a drag inside a stall shows the stall.
    const a = stepAtX(Math.min(p[0], from[0])), b = stepAtX(Math.max(p[0], from[0]));
    const v = {a: a, b: Math.max(b, Math.min(a + 1, n - 1)), r0: view.r0, r1: view.r1};
    if (Math.abs(p[1] - from[1]) >= 8) {
      const r0 = rowAtY(Math.max(Math.min(p[1], from[1]), L.stripH));
      const r1 = rowAtY(Math.min(Math.max(p[1], from[1]), L.stripH + L.plotH - .01));
      if (r0 >= 0 && r1 >= r0) { v.r0 = r0; v.r1 = r1; }
    }
    zoom(v);
  });
  canvas.addEventListener('dblclick', () => zoom(full));
  $('fit').onclick = () => zoom(full);
  $('prev').onclick = () => select(selected - 1);
  $('next').onclick = () => select(selected + 1);
  document.addEventListener('keydown', ev => {
    if (ev.key === 'ArrowLeft') select(selected - 1);
    else if (ev.key === 'ArrowRight') select(selected + 1);
    else if (ev.key === 'Escape') zoom(full);
  });
  const whole = () => view.a === full.a && view.b === full.b && view.r0 === full.r0 && view.r1 === full.r1;
  function zoom(v) {
    view = Object.assign({}, v);
    if (ready) remember();
    $('view').textContent = n ? (whole() ? 'all' : 'zoomed to') + ' +' + fmt(t[view.a]) + ' – +' + fmt(t[view.b]) + ', syncs #' + view.a + '–#' + view.b +
      (rows.length ? ', ' + rows[view.r0].name + ' – ' + rows[view.r1].name : '') : 'no syncs';
    render();
  }
  window.addEventListener('resize', () => render());

  // ---- what was drawn, for tests and curious readers ----
  function report(lineH) {
    const box = overview.getBoundingClientRect();
    let wrapped = 0, outside = 0;
    labelEls.forEach(e => {
      const r = e.getBoundingClientRect();
      if (e.getClientRects().length > 1 || r.height > lineH * 1.5 || e.scrollWidth > e.clientWidth + 1) wrapped++;
      if (r.left < box.left - .5 || r.right > box.right + .5 || r.top < box.top - .5 || r.bottom > box.bottom + .5) outside++;
    });
    const shown = overview.querySelectorAll('.edit');
    let hidden = 0;
    shown.forEach(m => {
      const r = m.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0) || r.left < box.left || r.right > box.right || r.top < box.top) hidden++;
    });
    // Every edit in the view has a visible label (its own, or a shared "4–7"); no label overlaps another
    // and no edit's line crosses a label.
    const meets = (a, b) => a.left < b.right - .5 && b.left < a.right - .5 && a.top < b.bottom - .5 && b.top < a.bottom - .5;
    const rects = labelEls.map(e => e.getBoundingClientRect());
    let overlaps = 0, crossings = 0, labelled = 0;
    rects.forEach((a, i) => { for (let j = i + 1; j < rects.length; j++) if (meets(a, rects[j])) overlaps++; });
    const elabels = Array.from(overview.querySelectorAll('.elabel')), erects = elabels.map(e => e.getBoundingClientRect());
    elabels.forEach((e, i) => {
      const r = erects[i];
      if (r.width > 0 && r.height > 0 && r.left >= box.left - .5 && r.right <= box.right + .5 && r.top >= box.top - .5) labelled += +e.dataset.last - +e.dataset.first + 1;
    });
    shown.forEach(m => { const r = m.getBoundingClientRect(); erects.forEach(a => { if (meets(r, a)) crossings++; }); });
    const empty = overview.querySelector('.empty'), er = empty && empty.getBoundingClientRect();
    let cells = 0;
    rows.forEach(row => row.runs.forEach((run, k) => { if (run.length > 1) cells += runEnd(row, k) - run[0]; }));
    const instants = n ? view.b - view.a + 1 - (extra[view.b] - extra[view.a]) : 0; // in the view
    const st = $('render-stats'), de = document.documentElement;
    const a = {
      'pods': view.r1 - view.r0 + 1, 'syncs': n ? view.b - view.a + 1 : 0, 'instants': instants, 'cells': cells, 'runs': stats.runs,
      'edits': shown.length, 'edits-hidden': hidden, 'edit-labels': labelled, 'edit-label-kind': overview.querySelector('.elabel.num') ? 'number' : 'text',
      'labels-overlap': overlaps, 'lines-cross-labels': crossings, 'requeues': stats.requeues || 0,
      'empty-message': er && er.width > 0 && er.height > 0 ? empty.textContent : '',
      'revision-colours': revColours.join(' '), 'state-colours': stateColours.join(' '),
      'row-labels': overview.querySelectorAll('.rlabel').length, 'ticks': overview.querySelectorAll('.tick').length,
      'wrapped': wrapped, 'labels-outside': outside,
      'box': [box.left, box.top, box.width, box.height].map(Math.round).join(' '),
      'plot': Math.round(L.W || 0) + ' ' + Math.round(L.plotH || 0),
      'viewport': de.clientWidth + ' ' + de.clientHeight, 'page': de.scrollWidth + ' ' + de.scrollHeight,
    };
    for (const k in a) st.setAttribute('data-' + k, a[k]);
    st.textContent = count(rows.length, 'pod') + ' × ' + count(n, 'sync') + ' (' + count(n ? n - extra[n - 1] : 0, 'instant') + '), ' +
      count(edits.length, 'edit') + ', ' + count(requeues.length, 'requeue');
  }

  // The view and the selected sync are kept in the address (#syncs=100-200&pods=0-99&sync=150, pods
  // by ordinal), so that a link or a reload shows the same picture.
  let ready = false;
  function remember() {
    let h = 'sync=' + selected;
    if (!whole()) h = 'syncs=' + view.a + '-' + view.b + (rows.length ? '&pods=' + rows[view.r0].o + '-' + rows[view.r1].o : '') + '&' + h;
    try { history.replaceState(null, '', '#' + h); } catch (e) { /* some browsers refuse it for file: pages */ }
  }
  function fromAddress() {
    const q = new URLSearchParams(location.hash.slice(1)), v = Object.assign({}, full);
    const range = k => (q.get(k) || '').split('-').map(Number);
    const s = range('syncs'), p = range('pods'), i = Number(q.get('sync'));
    if (s.length === 2 && s[0] <= s[1] && s[0] >= 0 && s[1] < n) { v.a = s[0]; v.b = s[1]; }
    if (p.length === 2 && rows.length) {
      const r0 = rows.findIndex(r => r.o >= p[0]);
      let r1 = -1;
      rows.forEach((r, k) => { if (r.o <= p[1]) r1 = k; });
      if (r0 >= 0 && r1 >= r0) { v.r0 = r0; v.r1 = r1; }
    }
    if (q.has('sync') && i >= 0 && i < n) selected = i;
    return v;
  }

  zoom(fromAddress());
  select(selected);
  ready = true;
})();
</script>
</body>
</html>
`))
