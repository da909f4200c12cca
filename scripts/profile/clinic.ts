// Runs one clinic tool on an exercise server under the exercise's own load: clinic starts the server,
// and once it listens runs our load script (--on-port), which uses the same runLoad as `verify`, not
// clinic's bundled autocannon. Everything runs in its own process group, in the output folder (clinic and
// 0x leave working files in their current directory), and is ended if it outlasts its time bound.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LoadProgress } from '../load.ts';
import type { LoadResult } from '../result.ts';
import type { LoadProfile } from '../manifest.ts';
import { adoptProcessGroup, freePort } from '../server-process.ts';
import { CLINIC_COMMAND, type ClinicTool } from './tools.ts';

/** The prefix of the lines the load script writes on its stdout, which clinic passes through to ours. */
export const LOAD_LINE = 'hotpath-load ';

/** What the load script reports, one JSON object per line after LOAD_LINE. */
export type LoadEvent = { type: 'progress'; progress: LoadProgress } | { type: 'done'; result: LoadResult } | { type: 'error'; message: string };

const CLINIC_BIN = createRequire(import.meta.url).resolve('clinic/bin.js');
const TSX_LOADER = import.meta.resolve('tsx');
const LOAD_SCRIPT = fileURLToPath(import.meta.resolve('./load-on-port.ts'));
const PICK_MAIN_ISOLATE = fileURLToPath(import.meta.resolve('./pick-main-isolate.cjs'));
/** A clinic report bundles its viewer (hundreds of KB); anything this small holds no report. */
const MIN_HTML_BYTES = 20_000;
const OUTPUT_LIMIT = 64 * 1024;

export interface ClinicOptions {
  tool: ClinicTool;
  serverFile: string;
  nodeFlags: string[];
  /** The services' environment for the server. */
  env: Record<string, string>;
  load: LoadProfile;
  /** Where clinic writes its data and HTML; also its working directory. */
  dir: string;
  timeoutMs: number;
  onProgress(progress: LoadProgress): void;
  onStatus(message: string): void;
}

export interface ClinicResult {
  html: string;
  load: LoadResult;
  /** What clinic and the server printed (the last 64 KB). */
  output: string;
}

export class ProfileError extends Error {
  constructor(
    message: string,
    readonly output = '',
  ) {
    super(message);
    this.name = 'ProfileError';
  }
}

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

export async function runClinic(options: ClinicOptions): Promise<ClinicResult> {
  const command = CLINIC_COMMAND[options.tool];
  const port = await freePort();
  const onPort = [process.execPath, '--import', TSX_LOADER, LOAD_SCRIPT].map(shellQuote).join(' ');
  // flame: 0x must read the server's main thread's V8 log, not its module loader thread's (see the file).
  const preload = options.tool === 'flame' ? ['--require', PICK_MAIN_ISOLATE] : [];
  const args = [...preload, CLINIC_BIN, command, '--open=false', '--dest', options.dir, '--on-port', onPort, '--'];
  args.push(process.execPath, ...options.nodeFlags, '--import', TSX_LOADER, options.serverFile);
  const child = spawn(process.execPath, args, {
    cwd: options.dir,
    // Its own process group: clinic, the server it starts and the load script end together.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...options.env,
      PORT: String(port),
      NO_INSIGHT: '1',
      NO_UPDATE_NOTIFIER: '1',
      HOTPATH_PROFILE_LOAD: JSON.stringify(options.load),
    },
  });
  adoptProcessGroup(child);

  let output = '';
  const keep = (text: string) => (output = (output + text).slice(-OUTPUT_LIMIT));
  let html: string | undefined;
  let load: LoadResult | undefined;
  let loadError: string | undefined;
  // A progress event came: the server listened and the load began.
  let loadStarted = false;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = loadEventIn(line);
    if (event) {
      if (event.type === 'progress') {
        loadStarted = true;
        options.onProgress(event.progress);
      }
      if (event.type === 'done') {
        load = event.result;
        options.onStatus(`clinic ${command} is writing its report...`);
      }
      if (event.type === 'error') loadError = event.message;
      return;
    }
    keep(`${line}\n`);
    const generated = /Generated HTML file is (file:\S+)/.exec(line);
    if (generated) html = fileURLToPath(generated[1]!);
  });
  child.stderr!.on('data', (chunk: Buffer) => keep(chunk.toString()));

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, 'SIGTERM');
    setTimeout(() => killGroup(child.pid, 'SIGKILL'), 2000).unref();
  }, options.timeoutMs);
  const closed = new Promise((resolve) => child.once('close', resolve));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(timer);
  // Whatever clinic left behind in its group (a server it did not stop) goes with it, and with it the
  // last holder of our pipes: then all of the output has been read.
  killGroup(child.pid, 'SIGKILL');
  await closed;

  const name = `clinic ${command}`;
  if (timedOut) throw new ProfileError(`${name} did not finish within ${Math.round(options.timeoutMs / 1000)} s; it and everything it started were ended`, output);
  if (loadError) throw new ProfileError(`the load under ${name} failed: ${loadError}`, output);
  if (exit.code !== 0) throw new ProfileError(`${name} failed (${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`})`, output);
  if (!load && !loadStarted) throw new ProfileError(`${name} ended before the load ran: did the server listen on the PORT it was given?`, output);
  if (!load) throw new ProfileError(`${name} ended while the load ran, and the load script said nothing of it (its output is below)`, output);
  // clinic writes a report even of a server that died: of its start, not of its work under load.
  const serverExit = serverExitIn(output);
  if (serverExit) throw new ProfileError(`the server exited with code ${serverExit} during the load under ${name}`, output);
  if (load.answered === 0) throw new ProfileError(`the server answered none of the load's requests under ${name} (${load.errors} errors, ${load.non2xx} not 2xx)`, output);
  if (!html || !existsSync(html)) throw new ProfileError(`${name} wrote no HTML report`, output);
  const bytes = statSync(html).size;
  if (bytes < MIN_HTML_BYTES) throw new ProfileError(`${name} wrote an HTML report of only ${bytes} bytes: it holds no profile`, output);
  if (/seems to be empty/i.test(output)) throw new ProfileError(`${name} collected no data`, output);
  return { html, load, output };
}

/**
 * The load script's event on a line of clinic's output. The script shares that pipe with clinic, which
 * passes on the server's output in writes of its own: one longer than the pipe's atomic size (4 KB) can
 * be split, and an event (shorter) land between its parts, after a part with no line end.
 */
export function loadEventIn(line: string): LoadEvent | undefined {
  const at = line.indexOf(LOAD_LINE);
  if (at < 0) return undefined;
  try {
    return JSON.parse(line.slice(at + LOAD_LINE.length)) as LoadEvent;
  } catch {
    return undefined; // Not one of ours: it stays in the output.
  }
}

/** The exit code of a server that ended with an error under clinic flame, which 0x prints and goes on. */
function serverExitIn(output: string): string | undefined {
  return /Target subprocess error, code: (\S+)/.exec(output)?.[1];
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}
