// Artillery, installed on demand: the pinned version in a folder of the project that git ignores, never
// in the workshop's own dependencies (docs/artillery.md says why, with the measured size and time), and
// run with its telemetry off.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths.ts';

/** The version installed and run: an exact pin, changed on purpose only (and the docs' figures with it). */
export const ARTILLERY_VERSION = '2.0.34';

/** Where it is installed; HOTPATH_TOOLS_DIR moves it (a shared cache for several clones). */
export function toolsDir(): string {
  return process.env.HOTPATH_TOOLS_DIR ?? path.join(ROOT, '.hotpath', 'tools');
}

export function artilleryDir(version = ARTILLERY_VERSION): string {
  return path.join(toolsDir(), `artillery-${version}`);
}

/** Artillery's entry point in the install, run with this process's Node. */
export function artilleryBin(version = ARTILLERY_VERSION): string {
  return path.join(artilleryDir(version), 'node_modules', 'artillery', 'bin', 'run');
}

/** The pinned version is installed and complete (its package.json says so). */
export function artilleryInstalled(version = ARTILLERY_VERSION): boolean {
  try {
    const manifest = JSON.parse(readFileSync(path.join(artilleryDir(version), 'node_modules', 'artillery', 'package.json'), 'utf8')) as { version?: string };
    return manifest.version === version && existsSync(artilleryBin(version));
  } catch {
    return false;
  }
}

/** The environment Artillery runs with: its telemetry off (https://www.artillery.io/docs/resources/telemetry). */
export function artilleryEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, ARTILLERY_DISABLE_TELEMETRY: 'true' };
}

export interface InstallOptions {
  /** Lines for the person waiting (stderr by default). */
  say?: (line: string) => void;
  /** Where npm's own output goes (stderr by default; 'ignore' in tests that only want the result). */
  npmOutput?: 'inherit' | 'ignore';
  /** npm's command (tests point it at a stand-in). */
  npm?: string;
}

/**
 * Installs the pinned Artillery unless it is there: `npm install` into a folder of its own, its install
 * scripts skipped (one downloads a Chromium that only Artillery's browser engine uses; HTTP needs none).
 * Installs beside the final folder and renames, so that a run interrupted halfway leaves nothing that
 * looks installed, and two at once do not mix their files. Says where, and shows progress as it goes.
 */
export async function ensureArtillery({ say = (line) => process.stderr.write(`${line}\n`), npmOutput = 'inherit', npm = 'npm' }: InstallOptions = {}): Promise<string> {
  if (artilleryInstalled()) return artilleryBin();
  const final = artilleryDir();
  const shown = path.relative(process.cwd(), final) || final;
  say(`Artillery ${ARTILLERY_VERSION} is not installed here: installing it into ${shown} (once; about 290 MB, 30-60 s; npm's registry)...`);
  mkdirSync(toolsDir(), { recursive: true });
  const staging = `${final}.installing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(
    path.join(staging, 'package.json'),
    `${JSON.stringify({ name: 'hotpath-artillery', private: true, description: 'Installed by the workshop (scripts/artillery/tool.ts); delete to reinstall.', dependencies: { artillery: ARTILLERY_VERSION } }, null, 2)}\n`,
  );
  const started = Date.now();
  // npm's progress bar shows only in a terminal: a line every 10 s says how far it got, anywhere.
  const ticker = setInterval(() => {
    const modules = path.join(staging, 'node_modules');
    const count = existsSync(modules) ? readdirSync(modules).filter((name) => !name.startsWith('.')).length : 0;
    say(`  ...${Math.round((Date.now() - started) / 1000)} s, ${count} packages unpacked so far`);
  }, 10_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(npm, ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier'], {
        cwd: staging,
        stdio: ['ignore', npmOutput === 'inherit' ? process.stderr : 'ignore', npmOutput === 'inherit' ? process.stderr : 'ignore'],
      });
      child.once('error', reject);
      child.once('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`npm install of artillery@${ARTILLERY_VERSION} failed (exit code ${code}); nothing was installed. Run it again when the registry answers.`);
    if (artilleryInstalled()) {
      // Another install finished first: keep it.
      rmSync(staging, { recursive: true, force: true });
    } else {
      rmSync(final, { recursive: true, force: true });
      renameSync(staging, final);
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  } finally {
    clearInterval(ticker);
  }
  say(`Artillery ${ARTILLERY_VERSION} installed in ${Math.round((Date.now() - started) / 1000)} s (${shown}; delete the folder to remove it).`);
  return artilleryBin();
}

export interface RunOptions {
  cwd?: string;
  /** Where its output goes: the parent's (a person runs it) or collected (a test reads it on failure). */
  output?: 'inherit' | 'collect';
  /** Ends it (SIGTERM, then SIGKILL) past this many ms. */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What it printed, when collected (the last 64 KB). */
  output: string;
}

/**
 * Runs the installed Artillery with `args` (e.g. ['run', '--output', 'report.json', 'script.yml']) on
 * this process's Node, telemetry off. Its own process group, so that a timeout ends its workers too.
 */
export function runArtillery(args: string[], { cwd = process.cwd(), output = 'inherit', timeoutMs }: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [artilleryBin(), ...args], {
      cwd,
      env: artilleryEnv(),
      detached: output === 'collect',
      stdio: output === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    const collect = (chunk: Buffer) => (text = (text + chunk.toString()).slice(-64 * 1024));
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (output === 'collect' && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone.
      }
    };
    let hard: NodeJS.Timeout | undefined;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            text += `\n[ended by the workshop after ${timeoutMs / 1000} s]\n`;
            kill('SIGTERM');
            hard = setTimeout(() => kill('SIGKILL'), 3000);
          }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(hard);
      resolve({ code, signal, output: text });
    });
  });
}
