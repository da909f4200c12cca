// Starts one exercise server in its own child process on 127.0.0.1 with the probe preloaded, knows when
// it listens, and ends it (and anything it started) on every path. Nothing here sleeps for readiness.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { commandSpawn, type CommandStart } from './command-start.ts';
import { gcSoFar, readIsolates, unseenThreads, withOtherIsolates } from './isolate-figures.ts';
import { processStat, processTree, processTreeTicks, TICKS_PER_SECOND, type ProcessStat } from './machine-load.ts';
import { isProbeMessage, type IsolateFigures, type RuntimeFigures, type SourceMapData } from './probe/messages.ts';

const TSX_LOADER = import.meta.resolve('tsx');
const PROBE = import.meta.resolve('./probe/exercise-server.js');
const OUTPUT_LIMIT = 64 * 1024;

export interface StartOptions {
  /** Port to listen on; 0 picks a free one. */
  port?: number;
  /** Extra Node flags, e.g. --trace-warnings or --max-old-space-size=6144. */
  nodeFlags?: string[];
  env?: Record<string, string>;
  /** How long the server may take to listen. */
  readyTimeoutMs?: number;
  /** Copy the server's output to the harness's own stdout/stderr as it comes (for `run`). */
  echo?: boolean;
  /** Start the server with this shell command instead of Node on the file (`workshop measure`, see command-start.ts). */
  command?: CommandStart;
}

export class ServerStartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = 'ServerStartError';
  }
}

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the harness asked it to stop; false for a crash. */
  expected: boolean;
}

export interface RunningServer {
  pid: number;
  port: number;
  url: string;
  /** The last 64 KB the server wrote to stdout and stderr, interleaved. */
  output(): string;
  /** Set once the process has exited. */
  exit(): ServerExit | undefined;
  /** Settles when the process exits, for whatever reason. */
  exited: Promise<ServerExit>;
  /** Periodic figures from the probe, in arrival order. */
  samples: RuntimeFigures[];
  resetFigures(): void;
  /** The probe's figures since the last reset, or undefined if the server does not answer in time. */
  snapshot(timeoutMs?: number): Promise<RuntimeFigures | undefined>;
  /** The heap a full collection leaves (bytes), asked of the probe now; undefined without an answer. */
  collect(timeoutMs?: number): Promise<number | undefined>;
  /** The event loop's utilization since the previous call (0 idle, 1 always busy), or undefined without an answer. */
  utilization(timeoutMs?: number): Promise<number | undefined>;
  /** The environment entry every process of the server carries (its isolate folder, as NAME=value): finds one that left its tree. */
  envMarker: string;
  /** Each process's main thread as its probe last wrote it (the main one and a cluster's workers), by pid: its event loop's time so far. */
  loops(): Map<number, IsolateFigures>;
  /** Worker threads the server started that wrote no figures (isolate-figures.ts): their GC and heap go uncounted. */
  unseenThreads(): string[];
  /** Its processes' CPU from their start until it listened (seconds). */
  cpuBeforeListening: number;
  /** Its isolates so far: each process's main thread and each worker thread that wrote figures. */
  isolates(): number;
  /** SIGTERM to the server's process group, SIGKILL after `graceMs` (default 2 s). */
  stop(graceMs?: number): Promise<ServerExit>;
  /** Source maps of these files as the server loaded them (by file URL); empty without an answer. */
  sourceMaps(files: string[], timeoutMs?: number): Promise<Record<string, SourceMapData>>;
  /**
   * Asks the server to exit normally (exit code 0), which runs what Node does at exit, such as writing the
   * profile of --cpu-prof (SIGTERM does not); stop() if it has not exited within `timeoutMs` (default 10 s).
   */
  exitNormally(timeoutMs?: number): Promise<ServerExit>;
}

const live = new Set<ChildProcess>();

/**
 * Has stopAll and killAllNow end this child's process group too, as they end the servers: for a process
 * started outside startServer (e.g. clinic, which starts the server itself). Spawn it with detached: true.
 */
export function adoptProcessGroup(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/**
 * The environment entry each server's processes carry (its isolate folder), by the harness's child: it
 * finds a process the server started in a session of its own, which the group's signal does not reach,
 * even once it has left the server's tree.
 */
const markers = new WeakMap<ChildProcess, string>();

/** Ends every server this process started, at once. Safe to call from an 'exit' handler. */
export function killAllNow(): void {
  for (const child of live) {
    const outside = strays(child);
    killGroup(child, 'SIGKILL');
    killStrays(outside, 'SIGKILL');
  }
}

/** Ends every server this process started: SIGTERM, then SIGKILL after a grace period. */
export async function stopAll(graceMs = 2000): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child, graceMs)));
}

export function liveServerCount(): number {
  return live.size;
}

/** The pids (= process group ids) of every server this process started and has not seen exit. */
export function liveServerPids(): number[] {
  return [...live].map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
}

// Ports handed out come from below every common ephemeral range (Linux 32768-60999, macOS and Windows
// 49152-65535): a port the OS chose with listen(0) is one it also gives to outgoing connections, and a
// load generator's client socket can take it between the check and the server's listen (EADDRINUSE).
const PORT_RANGE = { low: 20_000, high: 32_768 };
/** Ports this process handed out, so two servers started at once never get the same one. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low));
    if (handedOut.has(port)) continue;
    // Held before the check, which awaits: two calls at once must not both take the same port.
    handedOut.add(port);
    if (!(await isPortFree(port))) {
      handedOut.delete(port);
      continue;
    }
    if (handedOut.size > 2000) handedOut.delete(handedOut.values().next().value as number);
    return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${PORT_RANGE.low} and ${PORT_RANGE.high - 1} after 50 tries`);
}

/**
 * Runs `start` on `count` free ports, and again on fresh ones (3 tries in all) when the server it starts
 * exits saying a port was taken: another process can still bind one between the check and the listen.
 */
export async function onFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    try {
      return await start(ports);
    } catch (error) {
      const taken = error instanceof ServerStartError && /EADDRINUSE/.test(error.output);
      if (!taken || attempt >= 3) throw error;
    }
  }
}

export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

export async function startServer(file: string, options: StartOptions = {}): Promise<RunningServer> {
  if (!options.port) return onFreePorts(1, ([port]) => startOn(file, options, port!));
  if (!(await isPortFree(options.port))) {
    throw new ServerStartError(`port ${options.port} on 127.0.0.1 is already in use; stop what uses it or choose another with --port`, '');
  }
  return startOn(file, options, options.port);
}

async function startOn(file: string, options: StartOptions, port: number): Promise<RunningServer> {
  // Where each of the server's isolates writes its figures (probe/inject.ts); gone with the server.
  const isolateFolder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-isolates-'));
  const env = { ...process.env, ...options.env };
  const how = options.command
    ? commandSpawn(options.command, options.nodeFlags ?? [], env)
    : { program: process.execPath, args: [...(options.nodeFlags ?? []), '--import', TSX_LOADER, '--import', PROBE, file], cwd: undefined, env: {} };
  const child = spawn(how.program, how.args, {
    cwd: how.cwd,
    // Its own process group, so the harness can end the server and anything it spawned, and so a
    // Ctrl-C in the terminal reaches the harness, which then ends the server in order.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // ESBUILD_WORKER_THREADS: where Node runs module hooks on the main thread (22 and 24), tsx compiles a
    // file it has not cached there, and esbuild's synchronous calls start a worker thread of their own,
    // without the probe: the server would fail as one whose threads the probe could not see. Without
    // threads, esbuild runs its binary for each such file instead.
    env: { ...env, ...how.env, ESBUILD_WORKER_THREADS: '0', PORT: String(port), HOTPATH_PROBE: '1', HOTPATH_REPORTS: '1', HOTPATH_ISOLATE_FIGURES: isolateFolder },
  });
  live.add(child);
  markers.set(child, `HOTPATH_ISOLATE_FIGURES=${isolateFolder}`);
  child.once('exit', () => rmSync(isolateFolder, { recursive: true, force: true }));

  let output = '';
  const collect = (chunk: Buffer, echo?: NodeJS.WriteStream) => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    if (options.echo) echo?.write(chunk);
  };
  child.stdout?.on('data', (chunk: Buffer) => collect(chunk, process.stdout));
  child.stderr?.on('data', (chunk: Buffer) => collect(chunk, process.stderr));

  let exitInfo: ServerExit | undefined;
  let stopping = false;
  const exited = new Promise<ServerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      exitInfo = { code, signal, expected: stopping };
      resolve(exitInfo);
    });
  });

  const samples: RuntimeFigures[] = [];
  // The other isolates' GC when the reporting probe's figures were last reset: theirs count from there too.
  let othersSince = gcSoFar(readIsolates(isolateFolder));
  const withOthers = (figures: RuntimeFigures) => withOtherIsolates(figures, readIsolates(isolateFolder), othersSince);
  // Questions to the probe that wait for its answer, by id: snapshot, a full collection, utilization and source maps.
  const pendingAnswers = new Map<number, (answer: unknown) => void>();
  let nextQuestionId = 1;
  const ask = <T>(type: 'snapshot' | 'collect' | 'utilization' | 'sourceMaps', timeoutMs: number, extra: object = {}): Promise<T | undefined> =>
    new Promise((resolve) => {
      if (!child.connected) return resolve(undefined);
      const id = nextQuestionId++;
      const timer = setTimeout(() => {
        pendingAnswers.delete(id);
        resolve(undefined);
      }, timeoutMs);
      pendingAnswers.set(id, (answer) => {
        clearTimeout(timer);
        pendingAnswers.delete(id);
        resolve(answer as T);
      });
      child.send({ type, id, ...extra });
    });
  let onListening: ((port: number) => void) | undefined;
  child.on('message', (message) => {
    if (!isProbeMessage(message)) return;
    if (message.type === 'listening') onListening?.(message.port);
    if (message.type === 'sample') samples.push(withOthers(message.figures));
    if (message.type === 'snapshot') pendingAnswers.get(message.id)?.(withOthers(message.figures));
    if (message.type === 'collected') pendingAnswers.get(message.id)?.(message.heapUsed);
    if (message.type === 'utilization') pendingAnswers.get(message.id)?.(message.value);
    if (message.type === 'sourceMaps') pendingAnswers.get(message.id)?.(message.maps);
  });
  // A server that dies closes the channel; writes to it after that must not throw in the harness.
  child.on('error', () => {});

  const stop = async (graceMs = 2000): Promise<ServerExit> => {
    stopping = true;
    await stopChild(child, graceMs);
    return exited;
  };

  const timeoutMs = options.readyTimeoutMs ?? 20_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new ServerStartError(`${file} did not listen on 127.0.0.1:${port} within ${timeoutMs / 1000} s`, output)),
        timeoutMs,
      );
      onListening = (listeningPort) => {
        if (listeningPort !== port) return;
        clearTimeout(timer);
        resolve();
      };
      exited.then((exit) => {
        clearTimeout(timer);
        const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
        reject(new ServerStartError(`${file} exited (${how}) before it listened on port ${port}`, output));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const cpuBeforeListening = [...processTreeTicks(child.pid!, markers.get(child))].reduce((sum, [, ticks]) => sum + ticks, 0) / TICKS_PER_SECOND;

  return {
    cpuBeforeListening,
    isolates: () => readIsolates(isolateFolder).length,
    pid: child.pid!,
    envMarker: markers.get(child)!,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    exit: () => exitInfo,
    exited,
    samples,
    resetFigures: () => {
      othersSince = gcSoFar(readIsolates(isolateFolder));
      if (child.connected) child.send({ type: 'reset' });
    },
    snapshot: (timeoutMs = 5000) => ask<RuntimeFigures>('snapshot', timeoutMs),
    collect: (timeoutMs = 5000) => ask<number>('collect', timeoutMs),
    utilization: (timeoutMs = 2000) => ask<number>('utilization', timeoutMs),
    loops: () => new Map(readIsolates(isolateFolder).filter((i) => i.thread === 0).map((i) => [i.pid, i])),
    unseenThreads: () => unseenThreads(readIsolates(isolateFolder)),
    stop,
    sourceMaps: async (files, timeoutMs = 5000) => (await ask<Record<string, SourceMapData>>('sourceMaps', timeoutMs, { files })) ?? {},
    exitNormally: async (timeoutMs = 10_000) => {
      if (exitInfo) return exitInfo;
      stopping = true;
      if (child.connected) child.send({ type: 'exit' });
      const late = new Promise<undefined>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        void exited.then(() => clearTimeout(timer));
      });
      return (await Promise.race([exited, late])) ?? stop();
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    // Gone already (a crash): what it started outside its group may not be.
    killStrays(strays(child), 'SIGKILL');
    return;
  }
  const outside = strays(child);
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  killStrays(outside, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
  // The group may hold processes the server started; they go with it, and so do those outside it.
  killGroup(child, 'SIGKILL');
  killStrays(new Map([...outside, ...strays(child)]), 'SIGKILL');
}

/** The server's processes outside its process group (a session of their own), by pid, as they are now. */
function strays(child: ChildProcess): Map<number, ProcessStat> {
  if (child.pid === undefined) return new Map();
  const tree = processTree(child.pid, markers.get(child));
  return new Map([...tree].filter(([pid, stat]) => pid !== child.pid && stat.pgid !== child.pid));
}

/** Signals each of these processes that is still the one it was (the same start time: a pid can be reused). */
function killStrays(processes: Map<number, ProcessStat>, signal: NodeJS.Signals): void {
  for (const [pid, { started }] of processes) {
    if (processStat(pid)?.started !== started) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
