// `workshop measure <config>`: a team's own service against a baseline, in turns, under the verdict and
// report `verify` gives an exercise: exit code 0 on a pass, 1 on a fail, 3 when too close to call. A
// performance regression check for CI (docs/measure.md).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { prepareBaseline, shell } from '../baseline.ts';
import { benchProgress } from '../bench-progress.ts';
import type { ServerSpec } from '../bench-options.ts';
import type { Exercise } from '../exercises.ts';
import type { ExerciseManifest } from '../manifest.ts';
import { ANY_2XX, validateMeasure, type MeasureConfig } from '../measure-config.ts';
import { runBenchRepeated } from '../repeat.ts';
import { renderJson, renderReport } from '../report.ts';
import { MEASURED_SERVICE_ID, type RunReport } from '../result.ts';
import { UsageError } from '../usage-error.ts';

export interface MeasureOptions {
  json?: boolean;
  runs?: number;
}

/** A config file's default export, checked. */
export async function loadMeasureConfig(file: string): Promise<MeasureConfig> {
  const absolute = path.resolve(file);
  if (!existsSync(absolute)) throw new UsageError(`no config at ${file}`);
  const config = ((await import(pathToFileURL(absolute).href)) as { default?: MeasureConfig }).default;
  if (!config) throw new UsageError(`${file} has no default export (export default defineMeasure({...}))`);
  const problems = validateMeasure(config);
  if (problems.length > 0) throw new UsageError(`${file} is not a valid measure config:\n- ${problems.join('\n- ')}`);
  return config;
}

/** The config as the manifest the harness runs: the baseline in the shipped server's role, the service in the trainee's. */
export function measuredManifest(config: MeasureConfig): ExerciseManifest {
  return {
    id: MEASURED_SERVICE_ID,
    title: config.name,
    caseStudy: { company: '', article: '', source: '' },
    serverFile: '',
    shippedFile: '',
    services: config.services,
    probe: config.probe,
    load: config.load,
    contract: config.contract ?? ANY_2XX,
    check: config.check,
    afterLoad: config.afterLoad,
    stages: [],
    goal: config.targets,
    hints: [],
  };
}

export async function measure(file: string, options: MeasureOptions = {}): Promise<RunReport> {
  const config = await loadMeasureConfig(file);
  const configDir = path.dirname(path.resolve(file));
  const serviceCwd = path.resolve(configDir, config.service.cwd ?? '.');
  const progress = benchProgress();
  if (!('command' in config.baseline)) process.stderr.write(`checking out ${config.baseline.git} apart${config.service.build ? ` and building it (${config.service.build})` : ''}\n`);
  const baseline = await prepareBaseline(config.baseline, config.service, serviceCwd, configDir);
  try {
    if (config.service.build) {
      process.stderr.write(`building the service (${config.service.build})\n`);
      await shell(config.service.build, serviceCwd);
    }
    const exercise: Exercise = {
      manifest: measuredManifest(config),
      dir: configDir,
      solutionsDir: configDir,
      serverFile: serviceCwd,
      shippedFile: baseline.start.cwd ?? configDir,
      stageFile: () => {
        throw new Error('a measure config has no stages');
      },
    };
    const service = { command: config.service.command, cwd: serviceCwd, env: config.service.env };
    const changed = 'git' in config.baseline ? ' (the working tree)' : '';
    const specs: ServerSpec[] = [
      { run: { role: 'broken', label: 'baseline', title: baseline.title, file: baseline.start.command, nodeFlags: [] }, absoluteFile: exercise.shippedFile, command: baseline.start },
      { run: { role: 'mine', label: 'service', title: `${service.command}${changed}`, file: service.command, nodeFlags: [] }, absoluteFile: serviceCwd, command: service },
    ];
    const report = await runBenchRepeated(exercise, specs, { onEvent: progress }, options.runs ?? 1);
    process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
    return report;
  } finally {
    await baseline.remove();
  }
}
