// `workshop profile <ex>`: runs one server under the exercise's load with a profiler and writes a report
// to open in a browser, under .hotpath/profiles/, then says what to look for in it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchProgress } from '../bench-progress.ts';
import { specFor, type ServerChoice, type ServerSpec } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim, integer, red, yellow } from '../format.ts';
import type { LoadProgress } from '../load.ts';
import type { LoadResult } from '../result.ts';
import { ROOT, relativeToRoot } from '../paths.ts';
import { startServices, type Services } from '../services/index.ts';
import { ProfileError, runClinic } from '../profile/clinic.ts';
import { cpuProfileOf, type CpuRun } from '../profile/cpu-run.ts';
import { flameGraphHtml } from '../profile/flame-html.ts';
import { exerciseAdvice, readingAdvice } from '../profile/advice.ts';
import { chooseTool, limitNote, type ProfileTool } from '../profile/tools.ts';

export const PROFILES_DIR = path.join(ROOT, '.hotpath', 'profiles');

export interface ProfileOptions {
  choice: ServerChoice;
  /** Undefined: the best tool that works on this Node. */
  tool?: ProfileTool;
  /** Start the server with --trace-warnings and show the warnings it printed. */
  traceWarnings: boolean;
  /** Where the profile folders go (tests use a temporary one). */
  profilesDir?: string;
}

export interface ProfileResult {
  tool: ProfileTool;
  /** The HTML to open, absolute. */
  html: string;
  dir: string;
  load: LoadResult;
  /** What the server printed, from which the warnings are taken. */
  output: string;
  seconds: number;
}

/** The command: progress on stderr, the HTML's path and what to look for on stdout. Exit code 0 when written. */
export async function profile(exercise: Exercise, options: ProfileOptions): Promise<number> {
  let result: ProfileResult;
  try {
    result = await writeProfile(exercise, options);
  } catch (error) {
    if (!(error instanceof ProfileError)) throw error;
    process.stderr.write(`${red('error:')} ${error.message}\n${error.output ? dim(tail(error.output)) + '\n' : ''}`);
    return 1;
  }
  const { load } = result;
  const lines = [
    '',
    `${bold('profile:')} ${relativeToRoot(result.html)}`,
    dim(`open it in a browser: ${pathToFileURL(result.html).href}`),
    dim(
      `under load: ${integer(load.requestsPerSecond.mean)} req/s, p99 ${integer(load.latency.p99)} ms` +
        `${load.errors + load.timeouts > 0 ? `, ${integer(load.errors + load.timeouts)} errors and timeouts` : ''}; ${result.tool} took ${result.seconds.toFixed(1)} s in all`,
    ),
  ];
  const limit = limitNote(result.tool);
  if (limit) lines.push(yellow(`Note: ${limit}.`));
  if (exercise.manifest.load.settleAfterWarmup) {
    // verify waits for the warm-up's slow requests before it measures; a profile runs the phases back to back.
    lines.push(dim("(the measured phase follows the warm-up at once, without verify's wait for the warm-up's slow requests, so these figures read lower than verify's)"));
  }
  lines.push('', `${bold('How to read it:')} ${readingAdvice(result.tool)}`);
  const advice = exerciseAdvice(exercise, result.tool);
  if (advice.text) lines.push('', `${bold('What to look for:')} ${advice.text}`);
  if (advice.locked) lines.push('', dim(advice.locked));
  if (options.traceWarnings) {
    const warnings = warningsIn(result.output);
    lines.push('', warnings.length > 0 ? bold(`The server printed ${warnings.length} warning(s):`) : dim('The server printed no warnings.'), ...warnings.map((w) => dim(w)));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** Runs the profile and writes its folder; on any failure (or Ctrl-C) the folder is removed. */
export async function writeProfile(exercise: Exercise, options: ProfileOptions): Promise<ProfileResult> {
  const started = performance.now();
  const spec = specFor(exercise, options.choice);
  const choice = chooseTool(options.tool);
  if (choice.fallback) process.stderr.write(`${yellow(choice.fallback)}\n`);
  const { tool } = choice;
  const dir = path.join(options.profilesDir ?? PROFILES_DIR, folderName(exercise.manifest.id, spec.run.label, tool));
  mkdirSync(dir, { recursive: true });
  let written = false;
  const removeUnfinished = () => {
    if (!written) rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeUnfinished);

  const progress = benchProgress();
  const onProgress = (load: LoadProgress) => progress({ type: 'load', label: spec.run.label, progress: load });
  const status = statusLine();
  const requests = exercise.manifest.services ?? [];
  if (requests.length > 0) progress({ type: 'services', names: requests.map((service) => service.name) });
  let services: Services | undefined;
  try {
    services = await startServices(requests);
    const { env } = await services.prepare();
    const nodeFlags = [...spec.run.nodeFlags, ...(options.traceWarnings ? ['--trace-warnings'] : [])];
    const load = exercise.manifest.load;
    progress({ type: 'starting', label: `${spec.run.label} with ${tool === 'cpu' ? 'node --cpu-prof' : `clinic ${tool}`}`, index: 0, of: 1 });
    let html: string;
    let loadResult: LoadResult;
    let output: string;
    if (tool === 'cpu') {
      ({ html, load: loadResult, output } = await profileCpu(exercise, spec, { dir, env, nodeFlags, onProgress, status }));
    } else {
      const loadSeconds = load.warmupSeconds + load.durationSeconds;
      ({ html, load: loadResult, output } = await runClinic({
        tool,
        serverFile: spec.absoluteFile,
        nodeFlags,
        env,
        load,
        dir,
        // Measured: about 12 s past the load for 7 s of load (flame's analysis is the longest).
        timeoutMs: (60 + 4 * loadSeconds) * 1000,
        onProgress,
        onStatus: status,
      }));
    }
    status(`written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    written = true;
    return { tool, html, dir, load: loadResult, output, seconds: (performance.now() - started) / 1000 };
  } finally {
    await services?.stop();
    removeUnfinished();
    process.removeListener('exit', removeUnfinished);
  }
}


/** --tool cpu: the profile's tree (cpu-run.ts) drawn as a flame graph page in the profile's folder. */
async function profileCpu(exercise: Exercise, spec: ServerSpec, run: CpuRun): Promise<{ html: string; load: LoadResult; output: string }> {
  const { tree, load, output, file, seconds, processes } = await cpuProfileOf(exercise, spec, run);
  run.status('writing the flame graph...');
  const { manifest } = exercise;
  const { connections, warmupSeconds, durationSeconds } = manifest.load;
  const advice = exerciseAdvice(exercise, 'cpu');
  const html = path.join(run.dir, 'flame.html');
  writeFileSync(
    html,
    flameGraphHtml(tree, {
      title: `${manifest.id}: ${spec.run.label} (${spec.run.title})`,
      details: [
        `${spec.run.file} on Node ${process.version}${spec.run.nodeFlags.length > 0 ? ` with ${spec.run.nodeFlags.join(' ')}` : ''}, ` +
          `profiled with --cpu-prof for ${seconds.toFixed(1)} s, from start to exit` +
          (processes > 1 ? `; the samples of its ${processes} processes merged (the main one and ${processes - 1} it started, e.g. a cluster's workers)` : ''),
        `load: ${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s measured: ` +
          `${integer(load.requestsPerSecond.mean)} req/s, p99 ${integer(load.latency.p99)} ms`,
        `written ${new Date().toLocaleString()}; the raw profile is ${path.basename(file)} beside this page${processes > 1 ? ', each other process\'s worker-<pid>.cpuprofile' : ''} (Chrome DevTools opens it too)`,
      ],
      lookFor: [readingAdvice('cpu'), advice.text ?? advice.locked].filter(Boolean).join(' '),
    }),
  );
  return { html, load, output };
}

/** .hotpath/profiles/<id>-<label>-<tool>-<timestamp>: one folder per profile, never overwritten. */
export function folderName(id: string, label: string, tool: ProfileTool, when = new Date()): string {
  const stamp = when.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return `${id}-${label.replace(/[^a-z0-9]+/gi, '-')}-${tool}-${stamp}`;
}

/** A status line on stderr, below the progress line that a terminal rewrites in place. */
function statusLine(stream: NodeJS.WriteStream = process.stderr): (message: string) => void {
  return (message) => stream.write(`${stream.isTTY ? '\r\u001b[2K' : ''}${message}\n`);
}

/**
 * The warnings a Node process printed: "(node:123) SomeWarning: ..." lines, each with the stack
 * --trace-warnings prints under it.
 */
export function warningsIn(output: string): string[] {
  const warnings: string[][] = [];
  let current: string[] | undefined;
  for (const line of output.split('\n')) {
    if (/^\(node:\d+\) (\[[\w-]+\] )?\w*(Warning|Deprecation)\b/.test(line)) warnings.push((current = [line]));
    else if (current && /^\s+at /.test(line)) current.push(line);
    else current = undefined;
  }
  return warnings.map((lines) => lines.join('\n'));
}

/** The last lines of what a profiled server and its tool printed, as an error shows them. */
export function tail(output: string, lines = 30): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}
