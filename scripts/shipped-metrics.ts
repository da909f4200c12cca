// The metrics the workshop ships, for `workshop help figures`: whatever metrics/ holds, read from the folder
// as it is, so that a new metric there is listed without a line here.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Metric } from './metric.ts';

const METRICS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'metrics');

function isMetric(value: unknown): value is Metric {
  const metric = value as Partial<Metric> | undefined;
  return typeof metric?.id === 'string' && typeof metric.read === 'function' && typeof metric.format === 'function';
}

export async function shippedMetrics(): Promise<Metric[]> {
  const files = readdirSync(METRICS_DIR).filter((name) => name.endsWith('.ts')).sort();
  const modules = await Promise.all(files.map((name) => import(pathToFileURL(path.join(METRICS_DIR, name)).href) as Promise<Record<string, unknown>>));
  return modules.flatMap((module) => Object.values(module).filter(isMetric));
}
