// Writes a CPU profile's tree (cpu-tree.ts) as one self-contained HTML page: a flame graph drawn from the
// data embedded in the page, with no network access. Width is time; callers are drawn above callees.
// Hover a frame for its figures, click it to zoom in (click a frame above it to zoom out), and type in the
// search box to highlight frames by name or file (a regular expression or plain text).
import { escapeHtml } from '../html.ts';
import { hottestFunctions, type Frame, type HotFunction } from './cpu-tree.ts';
import { functionChanges, type DiffFrame, type FunctionChange } from './diff-tree.ts';

export interface FlameGraphInfo {
  /** e.g. "01-seed-service-slows-down: broken (as shipped)". */
  title: string;
  /** Short lines under the title: Node version, the load, how long the profile ran. */
  details: string[];
  /** The exercise's "what to look for" paragraph; `code` in backquotes is shown as code. */
  lookFor?: string;
}

/** What the page embeds, as JSON: the tree (times in microseconds) and the hottest functions by self time. */
export interface EmbeddedProfile {
  tree: Frame;
  hottest: HotFunction[];
  /**
   * A differential page (`profile --diff`): the tree's times are microseconds per answer of the first
   * side (its shape), each frame's `after` the other side's, and `changes` the functions by change.
   */
  diff?: { before: string; after: string; changes: FunctionChange[] };
}

const DATA_ID = 'profile-data';

export function flameGraphHtml(tree: Frame, info: FlameGraphInfo): string {
  return page({ tree, hottest: hottestFunctions(tree) }, info);
}

/**
 * A differential flame graph: the first side's shape (width is its time per answer), each frame coloured
 * by the change per answer on the other side: red where it grew, blue where it shrank, deep blue where it
 * vanished. Frames only the other side has are in the table of changes.
 */
export function diffFlameGraphHtml(tree: DiffFrame, info: FlameGraphInfo & { before: string; after: string }): string {
  const asFrame = (d: DiffFrame): Frame & { after: number } => ({
    name: d.name,
    file: d.file,
    line: d.line,
    column: d.column,
    kind: d.kind,
    self: d.beforeSelf,
    total: d.before,
    after: d.after,
    children: d.children.map(asFrame),
  });
  return page({ tree: asFrame(tree), hottest: [], diff: { before: info.before, after: info.after, changes: functionChanges(tree) } }, info);
}

function page(data: EmbeddedProfile, info: FlameGraphInfo): string {
  // "<" escaped, so no string in the profile can end the script element early.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const lookFor = info.lookFor ? `<p class="look-for"><strong>What to look for:</strong> ${inlineCode(escapeHtml(info.lookFor))}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)} · CPU flame graph</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>${escapeHtml(info.title)}</h1>
  ${info.details.map((line) => `<p class="detail">${escapeHtml(line)}</p>`).join('\n  ')}
  ${lookFor}
  <div class="controls">
    <input id="search" type="search" placeholder="highlight frames: name or file, text or regular expression" autocomplete="off">
    <span id="matched"></span>
    <button id="reset" type="button">reset zoom</button>
  </div>
  ${
    data.diff
      ? `<p class="legend"><span class="key grew">grew</span><span class="key same">about the same</span><span class="key shrank">shrank</span><span class="key vanished">vanished</span>
  Width is time per answer of ${escapeHtml(data.diff.before)}; colour is the change per answer in ${escapeHtml(data.diff.after)}. Callers above callees. Click a frame to zoom in, a frame above it to zoom out.</p>`
      : `<p class="legend"><span class="key app">your code</span><span class="key dependency">packages</span><span class="key node">Node.js</span><span class="key native">V8 and native</span>
  Width is time on the CPU. Callers above callees. Click a frame to zoom in, a frame above it to zoom out.</p>`
  }
</header>
<div id="graph"></div>
<div id="tooltip" hidden></div>
${
  data.diff
    ? `<h2>The functions that changed most (self time per answer)</h2>
<table id="hottest"><thead><tr><th>${escapeHtml(data.diff.before)}</th><th>${escapeHtml(data.diff.after)}</th><th>change</th><th>function</th><th>where</th></tr></thead><tbody></tbody></table>`
    : `<h2>Most time on top of the stack (self time)</h2>
<table id="hottest"><thead><tr><th>self</th><th>share</th><th>function</th><th>where</th></tr></thead><tbody></tbody></table>`
}
<script type="application/json" id="${DATA_ID}">${json}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The data embedded in a page written by flameGraphHtml. */
export function embeddedProfile(html: string): EmbeddedProfile {
  const match = new RegExp(`<script type="application/json" id="${DATA_ID}">([\\s\\S]*?)</script>`).exec(html);
  if (!match) throw new Error('no embedded profile in this HTML');
  return JSON.parse(match[1]!) as EmbeddedProfile;
}

/** `code` in an already escaped text, as <code>. */
function inlineCode(escaped: string): string {
  return escaped.replace(/`([^`]+)`/g, '<code>$1</code>');
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 16px 32px; color: #222; }
h1 { font-size: 20px; margin: 16px 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
.detail { margin: 2px 0; color: #555; }
.look-for { max-width: 70em; background: #fff8e1; border-left: 4px solid #f0a500; padding: 8px 12px; }
code { font: 13px ui-monospace, monospace; background: #0000000d; padding: 0 3px; }
.controls { display: flex; gap: 12px; align-items: center; margin: 12px 0 4px; }
#search { flex: 0 1 32em; padding: 4px 8px; font: inherit; }
#matched { color: #7a1fa2; }
.legend { color: #555; font-size: 13px; margin: 4px 0 8px; }
.key { display: inline-block; padding: 0 6px; margin-right: 6px; border-radius: 2px; color: #222; }
.key.app, .frame.app { background: hsl(18, 85%, 62%); }
.key.dependency, .frame.dependency { background: hsl(45, 85%, 60%); }
.key.node, .frame.node { background: hsl(110, 40%, 62%); }
.key.native, .frame.native { background: hsl(0, 0%, 78%); }
.key.grew { background: hsl(0, 80%, 62%); }
.key.same { background: hsl(0, 0%, 82%); }
.key.shrank { background: hsl(210, 70%, 70%); }
.key.vanished { background: hsl(220, 80%, 45%); color: #fff; }
#graph { position: relative; width: 100%; overflow: hidden; font: 12px/18px ui-monospace, monospace; }
.frame { position: absolute; height: 17px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
  padding: 0 3px; box-sizing: border-box; cursor: pointer; border-radius: 1px; }
.frame:hover { outline: 1px solid #222; z-index: 1; }
.frame.ancestor { opacity: 0.55; }
.frame.match { background: hsl(290, 65%, 65%) !important; }
#tooltip { position: fixed; pointer-events: none; background: #222; color: #fff; padding: 6px 8px; border-radius: 3px;
  font: 12px/1.5 ui-monospace, monospace; max-width: 60em; z-index: 2; white-space: pre; }
#hottest { border-collapse: collapse; font: 12px/1.6 ui-monospace, monospace; }
#hottest td, #hottest th { padding: 0 12px 0 0; text-align: left; }
#hottest td:nth-child(-n+2) { text-align: right; }
#hottest tbody tr { cursor: pointer; }
#hottest tbody tr:hover { background: #0000000d; }
`;

// The page's own script: plain JavaScript, no template literals (this file holds it in one).
const SCRIPT = String.raw`
'use strict';
const data = JSON.parse(document.getElementById('profile-data').textContent);
const root = data.tree;
const ROW = 18;
const graph = document.getElementById('graph');
const tooltip = document.getElementById('tooltip');
const search = document.getElementById('search');
const matched = document.getElementById('matched');
let zoomed = root;
let matcher = null;

(function link(frame, parent) {
  frame.parent = parent;
  for (const child of frame.children) link(child, frame);
})(root, null);

function ms(us) {
  if (data.diff) return us.toLocaleString(undefined, { maximumFractionDigits: 1 }) + ' µs/answer';
  return (us / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 }) + ' ms';
}
function change(before, after) {
  if (before <= 0) return after > 0 ? 'appeared' : '';
  const ratio = (after - before) / before;
  return ratio <= -0.999 ? 'vanished' : (ratio > 0 ? '+' : '') + Math.round(100 * ratio) + '%';
}
// Red where the time per answer grew, blue where it shrank, deeper the more; grey when within 10%.
function diffColour(frame) {
  if (frame.total <= 0) return 'hsl(0, 80%, 62%)';
  const ratio = (frame.after - frame.total) / frame.total;
  if (ratio <= -0.999) return 'hsl(220, 80%, 45%)';
  if (Math.abs(ratio) < 0.1) return 'hsl(0, 0%, 82%)';
  if (ratio < 0) return 'hsl(210, 70%, ' + Math.round(85 + 35 * ratio) + '%)';
  return 'hsl(0, 80%, ' + Math.round(85 - 23 * Math.min(ratio, 1)) + '%)';
}
function share(us) { return root.total > 0 ? (100 * us / root.total).toFixed(1) + '%' : '0%'; }
function where(frame) { return frame.file ? frame.file + (frame.line ? ':' + frame.line : '') : ''; }
function label(frame) { return frame === root ? 'all samples' : frame.name + (frame.file ? ' ' + where(frame) : ''); }

function box(frame, x, width, depth, ancestor) {
  const el = document.createElement('div');
  el.className = 'frame ' + frame.kind + (ancestor ? ' ancestor' : '');
  el.style.left = x + 'px';
  el.style.width = Math.max(width - 1, 1) + 'px';
  el.style.top = depth * ROW + 'px';
  if (width > 28) el.textContent = label(frame);
  if (data.diff && !ancestor) el.style.background = diffColour(frame);
  el.frame = frame;
  return el;
}

function render() {
  const width = graph.clientWidth;
  const fragment = document.createDocumentFragment();
  const ancestors = [];
  for (let frame = zoomed.parent; frame; frame = frame.parent) ancestors.unshift(frame);
  ancestors.forEach(function (frame, depth) { fragment.appendChild(box(frame, 0, width, depth, true)); });
  let deepest = ancestors.length;
  const scale = zoomed.total > 0 ? width / zoomed.total : 0;
  (function draw(frame, x, depth) {
    const w = frame.total * scale;
    if (w < 0.5) return;
    fragment.appendChild(box(frame, x, w, depth, false));
    deepest = Math.max(deepest, depth);
    for (const child of frame.children) {
      draw(child, x, depth + 1);
      x += child.total * scale;
    }
  })(zoomed, 0, ancestors.length);
  graph.textContent = '';
  graph.style.height = (deepest + 1) * ROW + 'px';
  graph.appendChild(fragment);
  highlight();
}

function matches(frame) { return matcher !== null && frame !== root && matcher(frame.name + ' ' + where(frame)); }

function highlight() {
  for (const el of graph.children) el.classList.toggle('match', matches(el.frame));
  if (!matcher) { matched.textContent = ''; return; }
  // Time under matching frames, each stack counted once (a match under a match adds nothing).
  let total = 0;
  (function sum(frame) {
    if (matches(frame)) { total += frame.total; return; }
    for (const child of frame.children) sum(child);
  })(root);
  matched.textContent = 'matched: ' + ms(total) + ', ' + share(total) + ' of all';
}

search.addEventListener('input', function () {
  const text = search.value.trim();
  if (!text) matcher = null;
  else {
    let pattern;
    try { pattern = new RegExp(text, 'i'); } catch (error) { pattern = null; }
    const lower = text.toLowerCase();
    matcher = pattern ? function (s) { return pattern.test(s); } : function (s) { return s.toLowerCase().includes(lower); };
  }
  highlight();
});

graph.addEventListener('click', function (event) {
  const frame = event.target.frame;
  if (!frame) return;
  zoomed = frame;
  render();
});
document.getElementById('reset').addEventListener('click', function () { zoomed = root; render(); });

graph.addEventListener('mousemove', function (event) {
  const frame = event.target.frame;
  if (!frame) { tooltip.hidden = true; return; }
  tooltip.textContent = [
    frame === root ? 'all samples' : frame.name,
    where(frame) + (frame.column ? ':' + frame.column : ''),
    'total ' + ms(frame.total) + ' (' + share(frame.total) + ' of all)',
    'self  ' + ms(frame.self) + ' (' + share(frame.self) + ' of all)',
    data.diff ? data.diff.after + ': total ' + ms(frame.after) + (frame === root ? '' : ' (' + change(frame.total, frame.after) + ')') : '',
  ].filter(Boolean).join('\n');
  tooltip.hidden = false;
  const x = Math.min(event.clientX + 12, window.innerWidth - tooltip.offsetWidth - 8);
  tooltip.style.left = Math.max(x, 0) + 'px';
  tooltip.style.top = event.clientY + 16 + 'px';
});
graph.addEventListener('mouseleave', function () { tooltip.hidden = true; });

const rows = document.querySelector('#hottest tbody');
const listed = data.diff
  ? data.diff.changes.map(function (c) { return { name: c.name, cells: [ms(c.before), ms(c.after), change(c.before, c.after), c.name, c.file] }; })
  : data.hottest.map(function (hot) { return { name: hot.name, cells: [ms(hot.self), share(hot.self), hot.name, where(hot)] }; });
for (const hot of listed) {
  const row = document.createElement('tr');
  for (const text of hot.cells) {
    const cell = document.createElement('td');
    cell.textContent = text;
    row.appendChild(cell);
  }
  row.addEventListener('click', function () {
    search.value = hot.name.replace(/[.*+?^$|()[\]{}\\]/g, '\\$&');
    search.dispatchEvent(new Event('input'));
  });
  rows.appendChild(row);
}

window.addEventListener('resize', render);
render();
`;
