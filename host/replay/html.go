package replay

import (
	"encoding/json"
	"html/template"
	"io"
)

// htmlStep is the compact form of a step embedded in the page.
type htmlStep struct {
	Index   int      `json:"i"`
	Offset  string   `json:"t"`
	Trigger []string `json:"trig,omitempty"`
	World   []string `json:"world,omitempty"`
	Actions []string `json:"actions,omitempty"`
	Error   string   `json:"error,omitempty"`
	Status  string   `json:"status"`
	Pods    [][]any  `json:"pods"` // [ordinal, name, revision label, state, terminating]
}

type htmlData struct {
	Scenario    string          `json:"scenario"`
	Description string          `json:"description"`
	Model       string          `json:"model"`
	Start       string          `json:"start"`
	Revisions   []RevisionLabel `json:"revisions"`
	Steps       []htmlStep      `json:"steps"`
	Outcome     Outcome         `json:"outcome"`
}

// WriteHTML writes a self-contained page (no external resources) that draws the rollout: one row
// per pod ordinal, one column per controller sync, each cell coloured by the pod's revision and
// shaded by its state. The timeline travels as JSON inside the page and a small script draws it;
// the script records what it drew (pods, steps, cells) in #render-stats, which the headless-browser
// test reads back.
func (tl *Timeline) WriteHTML(w io.Writer) error {
	d := htmlData{Scenario: tl.Scenario, Description: tl.Description, Model: tl.Model, Start: tl.Start,
		Revisions: tl.Revisions, Outcome: tl.Outcome, Steps: []htmlStep{}}
	if d.Revisions == nil {
		d.Revisions = []RevisionLabel{}
	}
	for _, st := range tl.Steps {
		hs := htmlStep{Index: st.Index, Offset: st.Offset.String(), Trigger: st.Trigger, World: worldStrings(st.World),
			Error: st.Error, Status: st.Revisions, Pods: [][]any{}}
		for _, a := range st.Actions {
			hs.Actions = append(hs.Actions, a.String())
		}
		for _, p := range st.Pods {
			hs.Pods = append(hs.Pods, []any{p.Ordinal, p.Name, p.Label, p.State(), p.Terminating})
		}
		d.Steps = append(d.Steps, hs)
	}
	data, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	return htmlPage.Execute(w, map[string]any{"Title": tl.Scenario, "Data": template.JS(data)})
}

var htmlPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}} — ordinal replay</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .2em; }
.sub { color: #555; margin-bottom: 1em; }
#grid { border-collapse: collapse; margin: 1em 0; }
#grid th { font-weight: normal; font-size: 11px; color: #555; padding: 0 1px; }
#grid th.col { height: 4.5em; vertical-align: bottom; }
#grid th.col span { display: inline-block; transform: rotate(-60deg); transform-origin: left bottom; white-space: nowrap; width: 1em; }
#grid th.row { text-align: right; padding-right: .5em; font-family: monospace; font-size: 12px; color: #222; }
#grid td { width: 18px; height: 22px; padding: 0; border: 1px solid #fff; }
#grid td.sel { outline: 2px solid #000; }
td.pod { cursor: pointer; }
td.Pending { opacity: .35; }
td.Running { background-image: repeating-linear-gradient(45deg, rgba(255,255,255,.75) 0 3px, transparent 3px 6px); }
td.Failed { box-shadow: inset 0 0 0 3px #c00; }
td.Succeeded { opacity: .5; box-shadow: inset 0 0 0 3px #666; }
td.term { background-image: repeating-linear-gradient(-45deg, rgba(0,0,0,.55) 0 2px, transparent 2px 5px); }
.legend span.sw { display: inline-block; width: 14px; height: 14px; vertical-align: middle; margin: 0 .3em 0 1em; border: 1px solid #ccc; }
#detail { font-family: monospace; font-size: 12px; white-space: pre-wrap; background: #f6f6f6; padding: .8em; min-height: 6em; }
.outcome { font-weight: bold; }
.outcome.complete { color: #070; } .outcome.stuck, .outcome.limit { color: #b00; } .outcome.partitioned, .outcome.waiting { color: #a60; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div class="sub" id="subtitle"></div>
<div class="legend" id="legend"></div>
<table id="grid"></table>
<div id="render-stats"></div>
<p>Click a cell or a column to see that sync.</p>
<div id="detail"></div>
<script type="application/json" id="timeline-data">{{.Data}}</script>
<script>
(function () {
  var d = JSON.parse(document.getElementById('timeline-data').textContent);
  var palette = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#bab0ac'];
  var colour = {};
  d.revisions.forEach(function (r, i) { colour[r.label] = palette[i % palette.length]; });
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  document.getElementById('title').textContent = d.scenario;
  var sub = document.getElementById('subtitle');
  sub.appendChild(el('div', {}, d.description));
  var oc = el('span', {'class': 'outcome ' + d.outcome.result}, d.outcome.result + ' after ' + d.outcome.duration + ': ' + d.outcome.summary);
  sub.appendChild(oc);
  sub.appendChild(el('div', {}, d.model + ' kubelet model, start ' + d.start));
  var legend = document.getElementById('legend');
  d.revisions.forEach(function (r) {
    var s = el('span', {'class': 'sw'}); s.style.background = colour[r.label];
    legend.appendChild(s); legend.appendChild(document.createTextNode(r.label + ' ' + r.name));
  });
  [['Ready', ''], ['Running', 'not Ready'], ['Pending', ''], ['Failed', ''], ['term', 'terminating']].forEach(function (x) {
    legend.appendChild(document.createTextNode(' '));
    var box = el('span', {'class': 'sw ' + x[0]}); box.style.background = '#888';
    if (x[0] === 'Running') box.style.backgroundImage = 'repeating-linear-gradient(45deg, rgba(255,255,255,.75) 0 3px, transparent 3px 6px)';
    if (x[0] === 'term') box.style.backgroundImage = 'repeating-linear-gradient(-45deg, rgba(0,0,0,.55) 0 2px, transparent 2px 5px)';
    if (x[0] === 'Pending') box.style.opacity = '.35';
    if (x[0] === 'Failed') box.style.boxShadow = 'inset 0 0 0 3px #c00';
    legend.appendChild(box); legend.appendChild(document.createTextNode(x[1] || x[0]));
  });
  // rows: every ordinal that ever had a pod
  var ords = {}, names = {};
  d.steps.forEach(function (s) { s.pods.forEach(function (p) { ords[p[0]] = true; names[p[0]] = p[1]; }); });
  var rows = Object.keys(ords).map(Number).sort(function (a, b) { return a - b; });
  var grid = document.getElementById('grid');
  var head = el('tr'); head.appendChild(el('th'));
  d.steps.forEach(function (s, i) {
    var th = el('th', {'class': 'col', 'data-step': i}); th.appendChild(el('span', {}, '+' + s.t));
    th.title = '#' + s.i + ' +' + s.t; th.onclick = function () { show(i); };
    head.appendChild(th);
  });
  grid.appendChild(head);
  var cells = 0;
  rows.forEach(function (o) {
    var tr = el('tr', {'class': 'podrow', 'data-ordinal': o});
    tr.appendChild(el('th', {'class': 'row'}, names[o]));
    d.steps.forEach(function (s, i) {
      var p = null;
      s.pods.forEach(function (q) { if (q[0] === o) p = q; });
      var td = el('td', {'data-step': i});
      if (p) {
        td.className = 'pod ' + p[3] + (p[4] ? ' term' : '');
        td.style.backgroundColor = colour[p[2]] || '#888';
        td.title = p[1] + ' revision ' + p[2] + ' ' + p[3] + (p[4] ? ' terminating' : '') + ' at +' + s.t;
        cells++;
      }
      td.onclick = function () { show(i); };
      tr.appendChild(td);
    });
    grid.appendChild(tr);
  });
  function show(i) {
    var s = d.steps[i], lines = ['#' + s.i + '  +' + s.t + (s.trig ? '  [' + s.trig.join(',') + ']' : '')];
    (s.world || []).forEach(function (w) { lines.push('  . ' + w); });
    lines.push('  pods: ' + (s.pods.map(function (p) { return p[0] + ':' + p[2] + '/' + p[3] + (p[4] ? '/term' : ''); }).join(' ') || '(none)'));
    (s.actions || ['(no writes)']).forEach(function (a) { lines.push('  ' + a); });
    if (s.error) lines.push('  error: ' + s.error);
    lines.push('  status: ' + s.status);
    document.getElementById('detail').textContent = lines.join('\n');
    Array.prototype.forEach.call(document.querySelectorAll('td.sel'), function (c) { c.classList.remove('sel'); });
    Array.prototype.forEach.call(document.querySelectorAll('td[data-step="' + i + '"]'), function (c) { c.classList.add('sel'); });
  }
  if (d.steps.length) show(d.steps.length - 1);
  // What was drawn, for tests and curious readers.
  var stats = document.getElementById('render-stats');
  var drawnRows = grid.querySelectorAll('tr.podrow').length;
  var drawnCols = head.querySelectorAll('th.col').length;
  stats.setAttribute('data-pods', drawnRows);
  stats.setAttribute('data-steps', drawnCols);
  stats.setAttribute('data-cells', cells);
  stats.textContent = drawnRows + ' pods \u00d7 ' + drawnCols + ' syncs, ' + cells + ' pod states drawn';
})();
</script>
</body>
</html>
`))
