// A server's isolates as the files their probes write show them (probe/inject.ts): the process the harness
// started, each cluster worker or process it forks, and every worker thread. The probe that reports over
// IPC sees its own isolate only; the others' GC and heap are added to its figures here, so that work a
// server moves into another process or a worker thread is counted as the server's.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { GcTotals, IsolateFigures, RuntimeFigures } from './probe/messages.ts';

/** Every isolate's figures as last written; none once the server has exited (the folder goes with it). */
export function readIsolates(folder: string): IsolateFigures[] {
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  const isolates: IsolateFigures[] = [];
  for (const name of names) {
    try {
      isolates.push(JSON.parse(readFileSync(path.join(folder, name), 'utf8')) as IsolateFigures);
    } catch {
      // removed as we read
    }
  }
  return isolates;
}

const keyOf = (isolate: IsolateFigures) => `${isolate.pid}-${isolate.thread}`;

/** The other isolates' GC so far, by isolate: what a reset of the reporting probe's figures starts from. */
export function gcSoFar(isolates: IsolateFigures[]): Map<string, GcTotals> {
  return new Map(isolates.filter((i) => !i.reporting).map((i) => [keyOf(i), i.gc]));
}

/**
 * The reporting probe's figures with the other isolates' added: their GC since `since` (all of it for an
 * isolate born after), and their heap as last written. A GC share may then pass 1: two isolates collect at once.
 */
export function withOtherIsolates(figures: RuntimeFigures, isolates: IsolateFigures[], since: Map<string, GcTotals>): RuntimeFigures {
  const others = isolates.filter((i) => !i.reporting);
  if (others.length === 0) return figures;
  const gc = structuredClone(figures.gc);
  let { heapUsed, heapTotal, heapAfterGc } = figures;
  for (const isolate of others) {
    const before = since.get(keyOf(isolate));
    for (const kind of ['minor', 'major', 'other'] as const) {
      gc[kind].count += Math.max(0, isolate.gc[kind].count - (before?.[kind].count ?? 0));
      gc[kind].ms += Math.max(0, isolate.gc[kind].ms - (before?.[kind].ms ?? 0));
    }
    heapUsed += isolate.heapUsed;
    heapTotal += isolate.heapTotal;
    if (heapAfterGc !== undefined) heapAfterGc += isolate.heapAfterGc ?? isolate.heapUsed;
  }
  for (const kind of ['minor', 'major', 'other'] as const) gc[kind].share = figures.wallMs > 0 ? gc[kind].ms / figures.wallMs : 0;
  return { ...figures, gc, heapUsed, heapTotal, ...(heapAfterGc !== undefined ? { heapAfterGc } : {}) };
}

/** A thread's probe writes its first figures as it loads, before the thread's own code: well within this. */
const FIRST_FIGURES_MS = 3000;

/**
 * The worker threads an isolate started at least FIRST_FIGURES_MS before `now` that wrote no figures of
 * their own (started without the probe's preloads, `execArgv: []`): their GC and heap are not counted.
 * "process P, thread T" each.
 */
export function unseenThreads(isolates: IsolateFigures[], now = Date.now()): string[] {
  const seen = new Set(isolates.map(keyOf));
  return isolates.flatMap((isolate) =>
    (isolate.threads ?? [])
      .filter(({ thread, at }) => at <= now - FIRST_FIGURES_MS && !seen.has(`${isolate.pid}-${thread}`))
      .map(({ thread }) => `process ${isolate.pid}, thread ${thread}`),
  );
}
