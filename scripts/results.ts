// Keeps a run's result on disk: the JSON (the one result model) and each server's charts as SVG, in a
// folder of its own under .hotpath/results/ at the repository's root.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chartsFor } from './charts.ts';
import { ROOT } from './paths.ts';
import { renderJson } from './report.ts';
import type { RunReport } from './result.ts';
import type { DoctorResult } from './doctor/result.ts';

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

/** The folder of a result: the run's start, to the second, as a name that sorts and that every file system accepts. */
function resultDir(root: string, startedAt: string, exercise: string, kind: string): string {
  return path.join(root, `${startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${exercise}-${kind}`);
}

/** A doctor's result, as result.json in a folder of its own; returns its path. */
export function writeDoctorResult(result: DoctorResult, root = RESULTS_DIR): string {
  const dir = resultDir(root, result.startedAt, result.exercise, 'doctor');
  mkdirSync(dir, { recursive: true });
  const json = path.join(dir, 'result.json');
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  return json;
}

/** The newest doctor's result for an exercise, if any was written. */
export function latestDoctorResult(exercise: string, root = RESULTS_DIR): DoctorResult | undefined {
  if (!existsSync(root)) return undefined;
  const newest = readdirSync(root).filter((name) => name.endsWith(`-${exercise}-doctor`)).sort().at(-1);
  if (!newest) return undefined;
  try {
    return JSON.parse(readFileSync(path.join(root, newest, 'result.json'), 'utf8')) as DoctorResult;
  } catch {
    return undefined;
  }
}

export async function writeResults(report: RunReport, kind: 'load' | 'ramp' | 'soak', root = RESULTS_DIR): Promise<WrittenResults> {
  const dir = resultDir(root, report.startedAt, report.exercise.id, kind);
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
