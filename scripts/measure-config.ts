// What `workshop measure <config>` reads: a team's own service under the verdict an exercise gets, written
// with the manifest's API (services, load, probe, targets). The service is measured against a baseline
// in the same run, in turns: another command, or a git revision of the same repository built the same way.
import type { CheckResult } from './check.ts';
import { loadProblems, type LoadProfile } from './load-profile.ts';
import { metricNeeds, targetProblems, type AfterLoadContext, type AnswerContract, type CheckContext, type ExerciseManifest, type Target } from './manifest.ts';
import type { Service } from './service.ts';

export type { Target } from './manifest.ts';
export { defineMetric, type Metric } from './metric.ts';
export { defineService, type Service } from './service.ts';
export { Expectations, fetchResponse, type CheckResult } from './check.ts';

/** How the service starts: a shell command run in `cwd`, that listens on process.env.PORT on 127.0.0.1. */
export interface ServiceStart {
  /** e.g. "node app.js". Node must be the process that serves (not npm start): see docs/measure.md. */
  command: string;
  /** Run before the measurement, in the same folder (e.g. "npm ci", "npm run build"); the git baseline is built with it too. */
  build?: string;
  /** Relative to the config's folder (default: the config's folder). */
  cwd?: string;
  env?: Record<string, string>;
}

/** What the service is compared with: another command, or a git revision checked out apart and built the same way. */
export type Baseline = { command: string; cwd?: string; env?: Record<string, string> } | { git: string };

export interface MeasureConfig {
  /** What is measured, as the report's title. */
  name: string;
  service: ServiceStart;
  baseline: Baseline;
  services?: Service[];
  probe?: ExerciseManifest['probe'];
  load: LoadProfile;
  /** Rejects a fast but wrong service: runs against each listening server before the load, and again after it. */
  check(baseUrl: string, context: CheckContext): Promise<CheckResult>;
  /** What every answer under load must be; by default, a 2xx status. */
  contract?: AnswerContract;
  afterLoad?(context: AfterLoadContext): Promise<CheckResult>;
  /** Ratios to the baseline in the same run (against: 'baseline'), or a metric's own ratio (against: 'itself'). */
  targets: Target[];
}

export function defineMeasure(config: MeasureConfig): MeasureConfig {
  return config;
}

/** Every problem with a config, in words; empty when it is sound. */
export function validateMeasure(config: MeasureConfig): string[] {
  const problems: string[] = [];
  if (!config.name?.trim()) problems.push('name is empty');
  if (!config.service?.command?.trim()) problems.push('service.command is empty: the shell command that starts the service');
  const baseline = config.baseline as Partial<{ command: string; git: string }> | undefined;
  if (!baseline || Boolean(baseline.command?.trim()) === Boolean(baseline.git?.trim())) problems.push('baseline needs one of command or git (a revision: HEAD, main, v1.2.0)');
  if (typeof config.check !== 'function') problems.push('check is missing: what the service must answer, before the load and after it');
  if (!config.load) return [...problems, 'load is missing'];
  problems.push(...loadProblems(config.load));
  if (!(config.targets?.length > 0)) return [...problems, 'targets must have at least one target'];
  config.targets.forEach((target, index) => {
    problems.push(...targetProblems(target, `target ${index + 1}`));
    if (target.against !== 'baseline' && target.against !== 'itself') problems.push(`target ${index + 1}: against is 'baseline' (or 'itself'), not '${target.against}'`);
  });
  problems.push(...metricNeeds(config.targets, config.load));
  return problems;
}

/** Any answer with a 2xx status keeps it. */
export const ANY_2XX: AnswerContract = {
  check: (answer) => (answer.status >= 200 && answer.status < 300 ? [] : [`status ${answer.status}, not 2xx`]),
};
