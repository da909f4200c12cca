import { benchProgress } from '../bench-progress.ts';
import { runBench, specFor, type ServerChoice } from '../bench.ts';
import type { RampRequest } from '../ramp.ts';
import type { Exercise } from '../exercises.ts';
import type { LoadProfile } from '../manifest.ts';
import { examplePath, REQUEST_ID } from '../load-profile.ts';
import { doctorOfRun } from '../doctor/from-run.ts';
import type { DoctorResult } from '../doctor/result.ts';
import { bold, dim } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { goalFigures, renderJson, renderReport } from '../report.ts';
import { writeResults } from '../results.ts';
import { startServer } from '../server-process.ts';
import { startServices } from '../services/index.ts';

export interface RunOptions {
  choice: ServerChoice;
  port: number;
  load: boolean;
  json: boolean;
  nodeFlags: string[];
  /** `--soak`: seconds of steady load, reported window by window with trends. */
  soak?: number;
  /** `--ramp`: offered rate step by step up to the knee. */
  ramp?: RampRequest;
}

/** Starts one server and prints its URL until Ctrl-C, or with --load measures it once and stops. */
export async function run(exercise: Exercise, options: RunOptions): Promise<number> {
  const spec = specFor(exercise, options.choice);
  if (options.load) {
    const measure =
      options.soak !== undefined
        ? { kind: 'soak' as const, soak: { seconds: options.soak } }
        : options.ramp
          ? { kind: 'ramp' as const, ramp: options.ramp }
          : undefined;
    const report = await runBench(exercise, [spec], { onEvent: benchProgress(), extraNodeFlags: options.nodeFlags, judge: false, measure, seconds: !measure });
    process.stdout.write(`${options.json ? renderJson(report) : `${renderReport(report)}\n\n${goalFigures(exercise.manifest.goal, report.servers)}`}\n`);
    const doctor = report.servers[0] && doctorOfRun(exercise, report.servers[0]);
    // With --json, on stderr, so stdout stays one JSON document.
    if (doctor && !doctor.failure) (options.json ? process.stderr : process.stdout).write(`\n${doctorLine(doctor, options.choice)}\n`);
    const written = await writeResults(report, report.servers.some((s) => s.soak) ? 'soak' : report.servers.some((s) => s.ramp) ? 'ramp' : 'load');
    const paths = `\nresult: ${relativeToRoot(written.json)}\n${written.svgs.map((file) => `chart:  ${relativeToRoot(file)}\n`).join('')}`;
    // With --json, on stderr, so stdout stays one JSON document.
    (options.json ? process.stderr : process.stdout).write(dim(paths));
    return report.pass ? 0 : 1;
  }
  const services = await startServices(exercise.manifest.services);
  try {
    const { env } = await services.prepare();
    const nodeFlags = [...spec.run.nodeFlags, ...options.nodeFlags];
    const server = await startServer(spec.absoluteFile, { port: options.port, nodeFlags, env, echo: true });
    const { load } = exercise.manifest;
    process.stderr.write(
      `${bold(`${spec.run.label} (${spec.run.file})`)} is listening on ${bold(server.url + examplePath(load))}\n` +
        (nodeFlags.length > 0 ? dim(`Node flags: ${nodeFlags.join(' ')}\n`) : '') +
        services.describe().map((line) => dim(`${line}\n`)).join('') +
        dim(`Try:     ${curlCommand(server.url, load)}\nLoad it: ${autocannonCommand(server.url, load)}\n`) +
        dim('Ctrl-C stops it.\n'),
    );
    const exit = await server.exited;
    process.stderr.write(`the server exited (${exit.signal ?? `exit code ${exit.code}`})\n`);
    return exit.code === 0 ? 0 : 1;
  } finally {
    await services.stop();
  }
}

/** The doctor's kinds from this run's figures, in a line, and the command that shows the evidence. */
export function doctorLine(result: DoctorResult, choice: ServerChoice): string {
  const stage = choice === 'mine' ? '' : ` --stage ${choice}`;
  const command = `npm run workshop -- doctor ${result.exercise.slice(0, 2)}${stage}`;
  if (result.findings.length === 0) return `${bold('doctor:')} no problem found in these figures ${dim(`(what it looks for: ${command})`)}`;
  const kinds = result.findings.map((f) => `${f.title.charAt(0).toLowerCase()}${f.title.slice(1)}`).join('; ');
  return `${bold('doctor:')} ${kinds}. ${dim(`The evidence and the tool to use next: ${command}`)}`;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/** The URL as a shell word: quoted only when it holds something the shell would read (?, &, ...). */
const shellUrl = (url: string) => (/^[\w:/.@%+,=-]+$/.test(url) ? url : quote(url));

/** A curl command that sends one request of the exercise's load. */
export function curlCommand(url: string, load: LoadProfile): string {
  const parts = ['curl -i'];
  if (load.method && load.method !== 'GET') parts.push(`-X ${load.method}`);
  for (const [name, value] of Object.entries(load.headers ?? {})) parts.push(`-H ${quote(`${name}: ${value}`)}`);
  if (load.body !== undefined) parts.push(`-d ${quote(load.body)}`);
  parts.push(shellUrl(url + examplePath(load)));
  return parts.join(' ');
}

/** The autocannon command line for the exercise's load. */
export function autocannonCommand(url: string, load: LoadProfile): string {
  const parts = [`npx autocannon -c ${load.connections} -d ${load.durationSeconds}`];
  if (load.method && load.method !== 'GET') parts.push(`-m ${load.method}`);
  for (const [name, value] of Object.entries(load.headers ?? {})) parts.push(`-H ${quote(`${name}=${value}`)}`);
  if (load.body !== undefined) parts.push(`-b ${quote(load.body)}`);
  // -I: autocannon puts a new id in each request where the path says [<id>].
  if (load.path.includes(REQUEST_ID)) parts.push('-I');
  parts.push(shellUrl(url + load.path));
  return parts.join(' ');
}
