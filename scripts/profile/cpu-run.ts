// One server under the exercise's load with the runtime's own profiler (`node --cpu-prof`), as a tree of
// frames at lines of the .ts files (cpu-tree.ts): what `profile --tool cpu` draws, and each side of
// `profile --diff`.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { ServerSpec } from '../bench-options.ts';
import type { Exercise } from '../exercises.ts';
import { runLoad, type LoadProgress } from '../load.ts';
import { ROOT, relativeToRoot } from '../paths.ts';
import type { LoadResult } from '../result.ts';
import type { SourceMapData } from '../probe/messages.ts';
import { startServer, type RunningServer } from '../server-process.ts';
import { ProfileError } from './clinic.ts';
import { locateWith, mergeTrees, profileToTree, type CpuProfile, type Frame } from './cpu-tree.ts';

/** Preloaded into every server; its frames show in a CPU profile too. */
const PROBE_FILE = path.join(ROOT, 'scripts', 'probe', 'inject.ts');

export interface CpuRun {
  dir: string;
  env: Record<string, string>;
  nodeFlags: string[];
  onProgress(progress: LoadProgress): void;
  status(message: string): void;
}

export interface CpuProfileRun {
  tree: Frame;
  load: LoadResult;
  output: string;
  /** The raw profile, kept in the run's folder as server.cpuprofile. */
  file: string;
  /** How long the profile ran, from the server's start to its exit. */
  seconds: number;
  /** How many processes' profiles the tree merges: 1, or the main one and its workers. */
  processes: number;
}

/**
 * The runtime's own profiler: the server runs with --cpu-prof, and after the load is asked to exit
 * normally, since V8 writes the profile only then. Positions in .ts files are mapped back through the
 * source maps tsx made, which the probe hands over before the server exits.
 */
export async function cpuProfileOf(exercise: Exercise, spec: ServerSpec, run: CpuRun): Promise<CpuProfileRun> {
  const server = await startServer(spec.absoluteFile, { nodeFlags: [...run.nodeFlags, '--cpu-prof', `--cpu-prof-dir=${run.dir}`], env: run.env });
  let load: LoadResult;
  let maps;
  try {
    // The warm-up and the measured phase back to back. verify waits between them until the warm-up's slow
    // requests are done (03), but in a profile that wait is idle time, two thirds of 03's samples.
    load = await runLoad(server.url, exercise.manifest.load, run.onProgress);
    maps = await server.sourceMaps(mappedFiles(exercise, spec));
  } finally {
    run.status('the server is exiting, and V8 writes its profile...');
    await server.exitNormally();
  }
  return { ...(await profileOfExited(server, run.dir, maps)), load, output: server.output() };
}

/** The files whose positions a profile maps back to .ts lines: the exercise's, its solutions', the server's and the probe's. */
export function mappedFiles(exercise: Exercise, spec: ServerSpec): string[] {
  return [...sourceFiles(exercise), spec.absoluteFile, PROBE_FILE];
}

/** How long a server's other processes (a cluster's workers) may take to exit, and profile, after the main one. */
const OTHERS_EXIT_MS = 5000;

/**
 * The tree of the profiles a server started with --cpu-prof-dir=`dir` wrote as it exited normally: its main
 * process's, and those of the processes it started with the same flags (a cluster's workers, which exit
 * when the main one does), merged, so a server that spreads its work shows where that work went.
 */
export async function profileOfExited(
  server: RunningServer,
  dir: string,
  maps: Record<string, SourceMapData>,
): Promise<{ tree: Frame; file: string; seconds: number; processes: number }> {
  const exit = server.exit();
  if (exit?.code !== 0) {
    throw new ProfileError(`the server did not exit normally (${exit?.signal ?? `exit code ${exit?.code}`}), so V8 wrote no profile`, server.output());
  }
  await processGroupGone(server.pid, OTHERS_EXIT_MS);
  const { file, others } = takeProfiles(dir, server.pid);
  const options = { locate: locateWith(maps), root: ROOT };
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const tree = mergeTrees([profile, ...others.map((other) => JSON.parse(readFileSync(other, 'utf8')) as CpuProfile)].map((p) => profileToTree(p, options)));
  if (tree.total <= 0) throw new ProfileError(`the CPU profile ${relativeToRoot(file)} holds no samples`, server.output());
  return { tree, file, seconds: (profile.endTime - profile.startTime) / 1e6, processes: 1 + others.length };
}

/** Waits until no process of the group is left (its workers exited too), or `timeoutMs` passed. */
async function processGroupGone(pgid: number, timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return; // ESRCH: none left
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * V8 writes one profile per thread, named CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; on Node 20,
 * tsx's loader thread gets one too. Keeps each process's main thread (thread 0): the server's as
 * server.cpuprofile, any other process's as worker-<pid>.cpuprofile; drops the rest.
 */
function takeProfiles(dir: string, pid: number): { file: string; others: string[] } {
  const files = readdirSync(dir).filter((name) => /^CPU\..*\.cpuprofile$/.test(name));
  const mainThread = (name: string) => /\.(\d+)\.0\.\d+\.cpuprofile$/.exec(name)?.[1];
  const main = files.find((name) => mainThread(name) === String(pid));
  if (!main) throw new ProfileError(`V8 wrote no CPU profile for the server's main thread in ${relativeToRoot(dir)}`);
  const others: string[] = [];
  for (const name of files) {
    if (name === main) continue;
    const owner = mainThread(name);
    if (owner === undefined) {
      rmSync(path.join(dir, name)); // another thread's, e.g. tsx's loader
      continue;
    }
    const kept = path.join(dir, `worker-${owner}.cpuprofile`);
    renameSync(path.join(dir, name), kept);
    others.push(kept);
  }
  const file = path.join(dir, 'server.cpuprofile');
  renameSync(path.join(dir, main), file);
  return { file, others };
}

/** The TypeScript files of the exercise and its solutions: the ones whose positions are worth mapping. */
function sourceFiles(exercise: Exercise): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') visit(file);
      else if (entry.isFile() && entry.name.endsWith('.ts')) found.push(file);
    }
  };
  visit(exercise.dir);
  visit(exercise.solutionsDir);
  return found;
}

