// Artillery's JSON report (`artillery run --output report.json`) read into the workshop's result model:
// the figures of the phases an exported script names (script.ts), as LoadResult and RampStep.
// The report holds counters and summaries (min, max, mean, p50, p90, p99 ...) over the whole run, by
// metric name. Artillery's own (http.*) cover every request, warm-up included; an exported script also
// records each answer under the phase it arrived in (hotpath-load.cjs: hotpath.<phase>.codes.<status>,
// hotpath.<phase>.errors.<code>, hotpath.response_time.<phase>), which is what this reads.
import type { LoadResult, RampStep } from '../result.ts';
import type { ExportedPhase } from './script.ts';

const PREFIX = 'hotpath';

export interface ArtillerySummary {
  min: number;
  max: number;
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
}

/** The part of the report this reads: its aggregate over the whole run. */
export interface ArtilleryReport {
  aggregate: {
    counters: Record<string, number>;
    summaries: Record<string, ArtillerySummary>;
    firstMetricAt?: number;
    lastMetricAt?: number;
  };
}

/** One phase's figures, as the report gives them for the requests named for it. */
export interface PhaseFigures {
  name: string;
  seconds: number;
  offered?: number;
  ok: number;
  non2xx: number;
  /** Errors by code (ETIMEDOUT, ECONNREFUSED ...): requests without an answer. */
  errors: Record<string, number>;
  /** Milliseconds to the answer's last byte, whole, of every answer in the phase (2xx or not). */
  latency: ArtillerySummary;
}

/** Not an Artillery JSON report. */
export class ReportError extends Error {
  override name = 'ReportError';
}

export function parseReport(text: string): ArtilleryReport {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ReportError(`not JSON: ${(error as Error).message}`);
  }
  const aggregate = (json as { aggregate?: ArtilleryReport['aggregate'] } | null)?.aggregate;
  if (!aggregate || typeof aggregate.counters !== 'object' || typeof aggregate.summaries !== 'object') {
    throw new ReportError('no aggregate with counters and summaries: not the JSON report of `artillery run --output`');
  }
  return json as ArtilleryReport;
}

const EMPTY: ArtillerySummary = { min: 0, max: 0, count: 0, mean: 0, p50: 0, p90: 0, p99: 0 };

/** The figures of one named phase: its status codes, its errors and its response times. */
export function phaseFigures(report: ArtilleryReport, phase: ExportedPhase): PhaseFigures {
  const { counters, summaries } = report.aggregate;
  const prefix = `${PREFIX}.${phase.name}.`;
  let ok = 0;
  let non2xx = 0;
  const errors: Record<string, number> = {};
  for (const [key, count] of Object.entries(counters)) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const code = /^codes\.(\d{3})$/.exec(rest)?.[1];
    if (code) {
      if (code.startsWith('2')) ok += count;
      else non2xx += count;
    } else if (rest.startsWith('errors.')) errors[rest.slice('errors.'.length)] = count;
  }
  const latency = summaries[`${PREFIX}.response_time.${phase.name}`] ?? EMPTY;
  return { name: phase.name, seconds: phase.seconds, ...(phase.offered !== undefined ? { offered: phase.offered } : {}), ok, non2xx, errors, latency };
}

const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);
const round = (value: number) => Math.round(value * 10) / 10;

function latencyOf(summary: ArtillerySummary): LoadResult['latency'] {
  return { p50: round(summary.p50), p90: round(summary.p90), p99: round(summary.p99), max: round(summary.max), mean: round(summary.mean) };
}

/** Every answer the run got, warm-up included (what the server did the work for). */
function answeredOverall(report: ArtilleryReport): number {
  return Object.entries(report.aggregate.counters)
    .filter(([key]) => /^http\.codes\.2\d\d$/.test(key))
    .reduce((total, [, count]) => total + count, 0);
}

/**
 * The measured phases as one LoadResult: req/s is their 2xx answers over their seconds. The report has
 * no per-second counts (its periods are 10 s), so `perSecond` is empty and the stdev 0; the latency is of
 * one measured phase (of several, of the last: a ramp's figures are its steps').
 */
export function loadResultOf(report: ArtilleryReport, phases: ExportedPhase[]): LoadResult {
  const measured = phases.filter((p) => !p.warmup).map((p) => phaseFigures(report, p));
  if (measured.length === 0) throw new ReportError('no measured phase to read');
  const seconds = measured.reduce((total, p) => total + p.seconds, 0);
  const ok = measured.reduce((total, p) => total + p.ok, 0);
  const errors = measured.reduce((total, p) => total + sum(p.errors), 0);
  const non2xx = measured.reduce((total, p) => total + p.non2xx, 0);
  const timeouts = measured.reduce((total, p) => total + (p.errors.ETIMEDOUT ?? 0) + (p.errors.ERR_SOCKET_TIMEOUT ?? 0), 0);
  const answered = answeredOverall(report);
  const downloaded = report.aggregate.counters['http.downloaded_bytes'] ?? 0;
  return {
    requestsPerSecond: { mean: ok / seconds, stdev: 0 },
    latency: latencyOf(measured.at(-1)!.latency),
    // Artillery counts bytes over the whole run: the measured share of them.
    bytesPerSecond: answered > 0 ? (downloaded * (ok / answered)) / seconds : 0,
    requests: ok + non2xx + errors,
    errors,
    timeouts,
    non2xx,
    answered,
    perSecond: [],
    durationSeconds: seconds,
  };
}

/** An open model's measured phases as ramp steps: offered and answered req/s, latency, failures. */
export function rampStepsOf(report: ArtilleryReport, phases: ExportedPhase[]): RampStep[] {
  return phases
    .filter((p) => !p.warmup && p.offered !== undefined)
    .map((p) => {
      const figures = phaseFigures(report, p);
      return {
        offered: p.offered!,
        achieved: figures.ok / p.seconds,
        latency: latencyOf(figures.latency),
        errors: sum(figures.errors),
        timeouts: (figures.errors.ETIMEDOUT ?? 0) + (figures.errors.ERR_SOCKET_TIMEOUT ?? 0),
        non2xx: figures.non2xx,
        seconds: p.seconds,
      };
    });
}

/** Arrivals Artillery dropped because maxVusers were in flight (an open model past the knee). */
export function skippedUsers(report: ArtilleryReport): number {
  return report.aggregate.counters['vusers.skipped'] ?? 0;
}

/** Virtual users that ended on an error (no answer), over the whole run. */
export function failedUsers(report: ArtilleryReport): number {
  return report.aggregate.counters['vusers.failed'] ?? 0;
}
