// Keeps a run's result on disk: the JSON (the one result model) and each server's charts as SVG, in a
// folder of its own under .hotpath/results/ at the repository's root.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chartsFor } from './charts.ts';
import { ROOT } from './paths.ts';
import { renderJson } from './report.ts';
import type { RunReport } from './result.ts';

export const RESULTS_DIR = path.join(ROOT, '.hotpath', 'results');

export interface WrittenResults {
  dir: string;
  json: string;
  svgs: string[];
}

/** "stage 1" → "stage-1": a label as a file name. */
function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'server';
}

export async function writeResults(report: RunReport, kind: 'load' | 'ramp' | 'soak', root = RESULTS_DIR): Promise<WrittenResults> {
  // The run's start, to the second, as a name that sorts and that every file system accepts.
  const stamp = report.startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const dir = path.join(root, `${stamp}-${report.exercise.id}-${kind}`);
  mkdirSync(dir, { recursive: true });
  const json = path.join(dir, 'result.json');
  writeFileSync(json, `${renderJson(report)}\n`);
  const svgs: string[] = [];
  for (const server of report.servers) {
    if (!server.load) continue;
    for (const chart of await chartsFor(server)) {
      const file = path.join(dir, `${slug(server.label)}-${chart.name}.svg`);
      writeFileSync(file, chart.svg);
      svgs.push(file);
    }
  }
  return { dir, json, svgs };
}
