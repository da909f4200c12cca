// Charts of load over time, as vega-lite specs rendered to SVG in Node: a soak's windows, a ramp's steps
// and a steady run's seconds. The spec is kept beside the SVG so the hub can render the same chart live.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { integer } from './format.ts';
import type { RampResult, ServerRun, SoakResult } from './result.ts';

export interface Chart {
  /** File-name friendly: "soak-throughput", "ramp-latency", ... */
  name: string;
  spec: TopLevelSpec;
  svg: string;
}

export type ChartSpec = Omit<Chart, 'svg'>;

const WIDTH = 640;
const HEIGHT = 220;
const BLUE = '#2f6db5';
const ORANGE = '#d9730d';
const GREEN = '#2e8b57';
const PURPLE = '#7a4fb5';
const RED = '#c62828';
const GREY = '#8a8a8a';

const CONFIG = {
  background: 'white',
  padding: 12,
  config: {
    font: 'Helvetica, Arial, sans-serif',
    view: { stroke: null },
    title: { anchor: 'start', fontSize: 15, subtitleFontSize: 12, subtitleColor: '#555', offset: 10 },
    axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', titleColor: '#333', gridColor: '#ececec', domainColor: '#999', tickColor: '#999' },
    legend: { labelFontSize: 11, titleFontSize: 11, orient: 'top', labelLimit: 400 },
  },
} as const;

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const heading = (text: string, label?: string) => (label ? `${label} · ${text}` : text);

/**
 * A subtitle as lines short enough for the chart's width. Rendered without a canvas, vega estimates text
 * widths generously (0.8 em a character) and widens the SVG to fit a long line.
 */
export function wrap(text: string, width = 64): string[] {
  const lines: string[] = [];
  let line = '';
  // A unit stays with its number: "10 s", not "10" at the end of one line and "s" on the next.
  const words = text.split(' ').reduce<string[]>((list, word) => {
    if (list.length > 0 && /\d$/.test(list.at(-1)!) && /^(s|ms|MB|min|req\/s|points)\b/.test(word)) list[list.length - 1] += ` ${word}`;
    else list.push(word);
    return list;
  }, []);
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function signed(value: number, digits = 1): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

/** A red vertical rule where the server exited, labelled: layers for a chart whose x is seconds. */
function exitedLayers(endedAfter: number | undefined): object[] {
  if (endedAfter === undefined) return [];
  const x = { datum: endedAfter, type: 'quantitative' };
  // Their own one-row data: a layer inheriting the chart's windows would draw one mark per window.
  const data = { values: [{}] };
  return [
    { data, mark: { type: 'rule', color: RED, strokeDash: [4, 3] }, encoding: { x } },
    { data, mark: { type: 'text', color: RED, align: 'right', baseline: 'top', dx: -4, dy: 2, fontSize: 11 }, encoding: { x, y: { value: 0 }, text: { value: 'server exited' } } },
  ];
}

/** Specs for a soak: req/s and p99 over time, the heap's lowest samples with their trend, GC share. */
export function soakChartSpecs(soak: SoakResult, label?: string): ChartSpec[] {
  const fitted = new Set(soak.trends.heapUsed.fittedOn);
  const values = soak.windows.map((w, i) => ({
    time: w.startSecond + w.seconds / 2,
    requestsPerSecond: w.requestsPerSecond,
    latencyP99: w.latencyP99,
    heapMB: w.heapUsed === null ? null : w.heapUsed / 1e6,
    gcShare: w.gcShare,
    afterMajor: (w.majorGcs ?? 0) > 0,
    fitted: fitted.has(i),
  }));
  const x = { field: 'time', type: 'quantitative', title: 'time into the soak (s)', scale: { domain: [0, soak.endedAfter ?? soak.seconds] } };
  const windowNote = `each point is a ${soak.windowSeconds} s window`;
  const exited = soak.endedAfter !== undefined ? `; the server exited after ${soak.endedAfter} s` : '';
  const { trends } = soak;
  const panel = (field: string, title: string, color: string, xTitle: boolean) => ({
    width: WIDTH,
    height: HEIGHT * 0.7,
    layer: [
      {
        mark: { type: 'line', color, point: { filled: true, size: 30, color } },
        encoding: { x: xTitle ? x : { ...x, title: null }, y: { field, type: 'quantitative', title } },
      },
      ...exitedLayers(soak.endedAfter),
    ],
  });
  const throughput: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: {
      text: heading('Throughput and p99 latency over the soak', label),
      subtitle: wrap(`req/s ${signed(trends.requestsPerSecond.slopePerMinute, 0)} a minute, p99 ${signed(trends.latencyP99.slopePerMinute)} ms a minute; ${windowNote}${exited}`),
    },
    data: { values },
    vconcat: [panel('requestsPerSecond', 'req/s (window mean)', BLUE, false), panel('latencyP99', 'p99 latency (ms)', ORANGE, true)],
  } as TopLevelSpec;
  const afterMajor = trends.heapUsed.basis === 'after-major';
  const heap: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: {
      text: heading('Heap over the soak', label),
      subtitle: wrap(
        `lowest heap sample in each ${soak.windowSeconds} s window (what a leak raises); ` +
          (afterMajor
            ? 'filled: windows with a major GC, the heap after a full collection; dashed: the trend fitted on them, '
            : 'filled: windows with a major GC; dashed: the trend over all windows, ') +
          `${signed(trends.heapUsed.slopePerMinute / 1e6)} MB a minute${exited}`,
      ),
    },
    data: { values },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      { mark: { type: 'line', color: GREEN }, encoding: { x, y: { field: 'heapMB', type: 'quantitative', title: 'heap used (MB)', scale: { zero: true } } } },
      {
        mark: { type: 'point', size: 36, color: GREEN, strokeWidth: 1.5 },
        encoding: { x, y: { field: 'heapMB', type: 'quantitative' }, fill: { condition: { test: 'datum.afterMajor', value: GREEN }, value: 'white' } },
      },
      {
        transform: [{ filter: 'datum.fitted' }, { regression: 'heapMB', on: 'time', method: 'linear' }],
        mark: { type: 'line', color: GREY, strokeDash: [6, 4] },
        encoding: { x: { field: 'time', type: 'quantitative' }, y: { field: 'heapMB', type: 'quantitative' } },
      },
      ...exitedLayers(soak.endedAfter),
    ],
  } as TopLevelSpec;
  const gc: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: {
      text: heading('Time in garbage collection over the soak', label),
      subtitle: wrap(`minor and major GC as a share of each window's wall time, ${signed(trends.gcShare.slopePerMinute * 100)} points a minute${exited}`),
    },
    data: { values },
    width: WIDTH,
    height: HEIGHT * 0.8,
    layer: [
      {
        mark: { type: 'line', color: PURPLE, point: { filled: true, size: 30, color: PURPLE } },
        encoding: { x, y: { field: 'gcShare', type: 'quantitative', title: 'time in GC (% of wall time)', axis: { format: '.0%' }, scale: { zero: true } } },
      },
      ...exitedLayers(soak.endedAfter),
    ],
  } as TopLevelSpec;
  return [
    { name: 'soak-throughput', spec: throughput },
    { name: 'soak-heap', spec: heap },
    { name: 'soak-gc', spec: gc },
  ];
}

/** Specs for a ramp: answered against offered with the "keeping up" diagonal, and p99 against offered (log). */
export function rampChartSpecs(ramp: RampResult, label?: string): ChartSpec[] {
  const values = ramp.steps.map((s) => ({
    offered: s.offered,
    achieved: s.achieved,
    // autocannon reports whole milliseconds: a p99 under 1 ms reads 0, which a log scale cannot place.
    latencyP99: Math.max(s.latency.p99, 0.5),
  }));
  const x = { field: 'offered', type: 'quantitative', title: 'offered load (req/s)' };
  const knee = ramp.knee;
  // Where it stopped keeping up (interpolated between the steps; results from before that have the step's rate).
  const kneeAt = knee ? (knee.rate ?? knee.offered) : 0;
  const kneeLayers = (y: 'achieved' | 'latencyP99'): object[] =>
    knee
      ? [
          { data: { values: [{}] }, mark: { type: 'rule', color: RED, strokeDash: [4, 3] }, encoding: { x: { datum: kneeAt, type: 'quantitative' } } },
          {
            data: { values: [{}] },
            mark: { type: 'text', color: RED, align: 'left', baseline: y === 'achieved' ? 'top' : 'bottom', dx: 5, fontSize: 11 },
            encoding: { x: { datum: kneeAt, type: 'quantitative' }, y: { value: y === 'achieved' ? 4 : HEIGHT - 4 }, text: { value: `knee: ${integer(kneeAt)} req/s offered` } },
          },
        ]
      : [];
  const kneeNote = knee ? `knee at ${integer(kneeAt)} req/s offered (${knee.reason})` : 'no knee: the server kept up with every step';
  const throughput: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: { text: heading('Answered against offered load', label), subtitle: wrap(`${ramp.steps.length} steps; ${kneeNote}`) },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: [{ offered: ramp.from, y: ramp.from }, { offered: ramp.to, y: ramp.to }] },
        mark: { type: 'line', strokeDash: [6, 4] },
        encoding: {
          x: { field: 'offered', type: 'quantitative', title: 'offered load (req/s)' },
          y: { field: 'y', type: 'quantitative' },
          color: { datum: 'keeping up (answered = offered)' },
        },
      },
      {
        data: { values },
        mark: { type: 'line', point: { filled: true, size: 36 } },
        encoding: {
          x,
          y: { field: 'achieved', type: 'quantitative', title: 'answered (2xx req/s)' },
          color: { datum: 'answered', scale: { domain: ['answered', 'keeping up (answered = offered)'], range: [BLUE, GREY] }, legend: { title: null } },
        },
      },
      ...kneeLayers('achieved'),
    ],
  } as TopLevelSpec;
  const cliff = ramp.cliff !== undefined ? `; the highest step's p99 is ${ramp.cliff.toFixed(1)}x the first step's` : '';
  const latency: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: { text: heading('p99 latency against offered load', label), subtitle: wrap(`log scale; low-load p99 ${integer(ramp.lowLoadP99)} ms${cliff}`) },
    data: { values },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        mark: { type: 'line', color: ORANGE, point: { filled: true, size: 36, color: ORANGE } },
        encoding: { x, y: { field: 'latencyP99', type: 'quantitative', title: 'p99 latency (ms, log scale)', scale: { type: 'log' } } },
      },
      ...kneeLayers('latencyP99'),
    ],
  } as TopLevelSpec;
  return [
    { name: 'ramp-throughput', spec: throughput },
    { name: 'ramp-latency', spec: latency },
  ];
}

/** Spec for a steady run: req/s second by second over the measured phase, with its mean. */
export function loadChartSpecs(run: ServerRun): ChartSpec[] {
  const perSecond = run.load?.perSecond ?? [];
  if (perSecond.length === 0) return [];
  const values = perSecond.map((requests, i) => ({ second: i + 1, requests }));
  const mean = perSecond.reduce((sum, n) => sum + n, 0) / perSecond.length;
  const spec: TopLevelSpec = {
    $schema: SCHEMA,
    ...CONFIG,
    title: { text: heading('Requests answered second by second', run.label), subtitle: wrap(`measured phase, ${perSecond.length} s; dashed: the mean, ${integer(mean)} req/s`) },
    data: { values },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        mark: { type: 'line', color: BLUE, point: { filled: true, size: 30, color: BLUE } },
        encoding: {
          x: { field: 'second', type: 'quantitative', title: 'second of the measured phase', scale: { domain: [1, Math.max(2, perSecond.length)] }, axis: { format: 'd', tickMinStep: 1 } },
          y: { field: 'requests', type: 'quantitative', title: 'requests answered (req/s)', scale: { zero: true } },
        },
      },
      { mark: { type: 'rule', color: GREY, strokeDash: [6, 4] }, encoding: { y: { datum: mean, type: 'quantitative' } } },
    ],
  } as TopLevelSpec;
  return [{ name: 'load-per-second', spec }];
}

/** Renders a vega-lite spec to SVG, in this process, without a browser or a canvas. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

async function render(specs: ChartSpec[]): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const { name, spec } of specs) charts.push({ name, spec, svg: await renderSvg(spec) });
  return charts;
}

export const soakCharts = (soak: SoakResult, label?: string) => render(soakChartSpecs(soak, label));
export const rampCharts = (ramp: RampResult, label?: string) => render(rampChartSpecs(ramp, label));
export const loadCharts = (run: ServerRun) => render(loadChartSpecs(run));

/** The charts for what a server's run holds: its soak, its ramp, or its steady load's seconds. */
export function chartsFor(run: ServerRun): Promise<Chart[]> {
  if (run.soak) return soakCharts(run.soak, run.label);
  if (run.ramp) return rampCharts(run.ramp, run.label);
  return loadCharts(run);
}
