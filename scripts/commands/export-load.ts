// `workshop export-load <ex|config>`: the load an exercise (or a `workshop measure` config) declares, as an
// Artillery test script, for a load beyond one machine (docs/artillery.md). Writes files only: it needs
// neither Artillery nor a server.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ParsedArgs } from '../args.ts';
import { PROCESSOR_FILE, PROCESSOR_SOURCE, exportLoad, toYaml, type ExportedLoad } from '../artillery/script.ts';
import { ARTILLERY_VERSION, artilleryInstalled } from '../artillery/tool.ts';
import { loadExercise, resolveExerciseId } from '../exercises.ts';
import { formerIdNote } from '../former-ids.ts';
import type { LoadProfile, RampProfile } from '../manifest.ts';
import { ROOT } from '../paths.ts';
import { resolveRamp, type RampRequest } from '../ramp.ts';
import { parseDuration } from '../soak.ts';
import { UsageError } from '../usage-error.ts';

export const DEFAULT_TARGET = 'http://127.0.0.1:3000';
/** Where scripts go without --out: beside the run results, in a folder git ignores. */
export const EXPORT_DIR = path.join(ROOT, '.hotpath', 'artillery');

/** What was exported from: an exercise's manifest or a measure config. */
export interface LoadSource {
  /** The exercise's id, or the config file's name without its extension. */
  name: string;
  load: LoadProfile;
  /** How to start the server on the target's port, for the closing hint. */
  serverHint: string;
}

export async function loadSourceOf(input: string): Promise<LoadSource> {
  if (/\.(c|m)?[jt]s$/.test(input) || input.includes('/')) {
    if (!existsSync(input)) throw new UsageError(`no config file at ${input} (or give an exercise: 01, 1 or its name)`);
    // Only for a config: loading one brings the measure command's modules.
    const { loadMeasureConfig } = await import('./measure.ts');
    const config = await loadMeasureConfig(input);
    // examples/sample-service/measure.config.ts is named for its folder: sample-service-measure.
    const base = path.basename(input).replace(/\.[^.]+$/, '').replace(/\.config$/, '');
    const name = `${path.basename(path.dirname(path.resolve(input)))}-${base}`;
    return { name, load: config.load, serverHint: 'your service, listening on the target' };
  }
  const id = resolveExerciseId(input, undefined, (typed, current) => console.error(formerIdNote(typed, current)));
  const exercise = await loadExercise(id);
  const number = id.slice(0, 2);
  return { name: id, load: exercise.manifest.load, serverHint: `npm run workshop -- run ${number}    # the server, on port 3000 (--stage N for a reference stage)` };
}

/** --target: the server's base URL; a path after the host is kept (the requests' paths go after it). */
export function targetOption(value: string | true | undefined): string {
  if (value === undefined) return DEFAULT_TARGET;
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new UsageError(`--target is a URL like ${DEFAULT_TARGET}, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--target must be an http:// or https:// URL, got "${value}"`);
  if (url.search || url.hash) throw new UsageError(`--target is the server's base URL, without a query or fragment, got "${value}"`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function rate(name: string, value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 1 || number > 100_000) throw new UsageError(`--${name} is a rate in requests per second, 1 to 100000; got "${value}"`);
  return Math.round(number);
}

/**
 * --ramp with its optional --from, --to and --over, as `run --ramp` takes them. An exercise without a ramp
 * of its own has its ramp set by the harness from what its warm-up reaches; an export measures nothing,
 * so it needs --from and --to.
 */
export function rampOf(flags: ParsedArgs['flags'], source: LoadSource): RampProfile | undefined {
  const { from, to, over } = flags;
  if (!flags.ramp) {
    const stray = Object.entries({ from, to, over }).find(([, value]) => value !== undefined);
    if (stray) throw new UsageError(`--${stray[0]} goes with --ramp`);
    return undefined;
  }
  const request: RampRequest = { from: rate('from', from), to: rate('to', to) };
  if (over !== undefined) request.seconds = parseDuration(String(over), 'over', 4, 600);
  const base = source.load.ramp;
  if (!base && (request.from === undefined || request.to === undefined)) {
    throw new UsageError(
      `${source.name} has no ramp of its own: \`run --ramp\` sets one from what its warm-up reaches, which an export cannot measure. ` +
        'Give the rates: --ramp --from REQ/S --to REQ/S (the rates `run --ramp` printed are a good start).',
    );
  }
  const [low, high] = [request.from ?? base?.from, request.to ?? base?.to];
  if (low !== undefined && high !== undefined && high <= low) throw new UsageError(`--to (${high} req/s) must be above --from (${low} req/s)`);
  return resolveRamp(request, base);
}

/**
 * --duration and --connections: the steady load's measured seconds and connections (virtual users), for a
 * run longer or wider than the exercise's few seconds on one machine. Per worker, in a distributed run.
 */
export function steadyOptions(flags: ParsedArgs['flags'], load: LoadProfile): LoadProfile {
  const changed = { ...load };
  if (flags.duration !== undefined) {
    if (flags.ramp) throw new UsageError('--duration is the steady load\'s; a ramp\'s length is its steps (--over)');
    changed.durationSeconds = parseDuration(String(flags.duration), 'duration', 1, 3600);
  }
  if (flags.connections !== undefined) {
    const connections = Number(flags.connections);
    if (!Number.isInteger(connections) || connections < 1 || connections > 10_000) {
      throw new UsageError(`--connections must be a whole number from 1 to 10000, got "${flags.connections}"`);
    }
    changed.connections = connections;
  }
  return changed;
}

/** --out: the script's file; its extension sets the format (Artillery reads .yml, .yaml and .json). */
export function outOption(value: string | true | undefined, source: LoadSource, ramp: boolean): { file: string; format: 'yaml' | 'json' } {
  const file = value === undefined ? path.join(EXPORT_DIR, `${source.name}${ramp ? '-ramp' : ''}.yml`) : path.resolve(String(value));
  const extension = path.extname(file).toLowerCase();
  if (extension === '.yml' || extension === '.yaml') return { file, format: 'yaml' };
  if (extension === '.json') return { file, format: 'json' };
  throw new UsageError(`--out names the script's file, ending in .yml, .yaml or .json (Artillery's formats), got "${value}"`);
}

function describe(exported: ExportedLoad, load: LoadProfile): string {
  const measured = exported.phases.filter((p) => !p.warmup);
  const warmup = exported.phases.find((p) => p.warmup);
  if (exported.model === 'closed') {
    return `closed model: ${load.connections} virtual users, each looping on the request (autocannon's ${load.connections} connections); ${warmup!.seconds} s to connect and warm up, ${load.durationSeconds} s measured`;
  }
  const rates = measured.map((p) => p.offered).join(', ');
  const phases = measured.length === 1 ? `${measured[0]!.seconds} s measured at ${rates} req/s` : `${measured.length} steps of ${measured[0]!.seconds} s at ${rates} req/s`;
  return `open model: arrival-rate phases, one request per virtual user, at most ${load.connections} in flight; ${warmup ? `${warmup.seconds} s warm-up at ${warmup.offered} req/s, then ` : ''}${phases}`;
}

/** The script's own comment lines: what it is, how it maps the load, and how to run it. */
function headerComments(source: LoadSource, exported: ExportedLoad, relativeFile: string): string[] {
  return [
    `Artillery test script for Hot Path's ${source.name}: its load as the manifest declares it.`,
    `Written by \`npm run workshop -- export-load\`; Artillery ${ARTILLERY_VERSION}'s format (https://www.artillery.io/docs/reference/test-script).`,
    `Needs ${PROCESSOR_FILE} beside it (config.processor): the clock the flow runs on, and the figures of each phase apart.`,
    '',
    describe(exported, source.load) + '.',
    'Where Artillery runs it differently from the workshop (autocannon):',
    ...exported.differences.map((line) => `- ${line}`),
    '',
    `Here: npm run workshop -- artillery run --output report.json ${relativeFile}`,
    'Beyond one machine (documented by Artillery, not tested by the workshop): docs/artillery.md.',
  ];
}

export interface ExportResult {
  source: string;
  model: ExportedLoad['model'];
  target: string;
  script: string;
  processor: string;
  format: 'yaml' | 'json';
  seconds: number;
  phases: ExportedLoad['phases'];
  differences: string[];
  run: string;
  artillery: { version: string; installed: boolean };
  config: ExportedLoad['script'];
}

/** Writes the script and the processor beside it; prints what it wrote, or the JSON of it with --json. */
export async function exportLoadCommand(args: ParsedArgs): Promise<number> {
  const declared = await loadSourceOf(args.positionals[0]!);
  const source = { ...declared, load: steadyOptions(args.flags, declared.load) };
  const ramp = rampOf(args.flags, source);
  const target = targetOption(args.flags.target);
  const { file, format } = outOption(args.flags.out, source, ramp !== undefined);
  const exported = exportLoad(source.load, { target, ramp, name: source.name });
  const relative = path.relative(process.cwd(), file);
  const shown = relative && !relative.startsWith('..') ? relative : file;
  const processor = path.join(path.dirname(file), PROCESSOR_FILE);
  mkdirSync(path.dirname(file), { recursive: true });
  const text =
    format === 'yaml'
      ? toYaml(exported.script, headerComments(source, exported, shown))
      : // JSON has no comments: the differences go in a key Artillery ignores (unknown keys are allowed).
        `${JSON.stringify({ ...exported.script, 'x-hotpath': { source: source.name, model: exported.model, differences: exported.differences } }, null, 2)}\n`;
  writeFileSync(file, text);
  copyFileSync(PROCESSOR_SOURCE, processor);
  const run = `npm run workshop -- artillery run --output report.json ${shown}`;
  const result: ExportResult = {
    source: source.name,
    model: exported.model,
    target,
    script: file,
    processor,
    format,
    seconds: exported.seconds,
    phases: exported.phases,
    differences: exported.differences,
    run,
    artillery: { version: ARTILLERY_VERSION, installed: artilleryInstalled() },
    config: exported.script,
  };
  if (args.flags.json === true) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  const install = artilleryInstalled() ? '' : ` (installs Artillery ${ARTILLERY_VERSION} into .hotpath/tools/ on first use, about 290 MB)`;
  process.stdout.write(
    [
      `Wrote ${shown}, and ${PROCESSOR_FILE} beside it (the script needs it).`,
      `  ${describe(exported, source.load)}, against ${target}: about ${exported.seconds} s.`,
      '',
      'Where Artillery runs it differently from the workshop (autocannon):',
      ...exported.differences.map((line) => `  - ${line}`),
      '',
      `Run it here${install}:`,
      `  ${source.serverHint}`,
      `  ${run}`,
      'Beyond one machine (artillery run-fargate, run-lambda, as Artillery documents them): docs/artillery.md',
      '',
    ].join('\n'),
  );
  return 0;
}
