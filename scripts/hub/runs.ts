// The hub's live runs: one at a time, each in a worker process (run-worker.ts), its events kept so a page
// that joins late gets them all, streamed to every watching page as server-sent events. A run nobody
// watches for ORPHAN_MS is cancelled: closing the page ends its servers. A run is servers under load (its
// last event a 'report') or the doctor on one server (its last event 'doctor': the result, written where
// `doctor` writes its results, and the exercise page's doctor panel drawn with it).
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerChoice } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { escapeHtml } from '../html.ts';
import { updateExercise } from '../progress.ts';
import type { DoctorResult } from '../doctor/result.ts';
import { relativeToRoot } from '../paths.ts';
import type { RunReport } from '../result.ts';
import { writeDoctorResult } from '../results.ts';
import { choicesOf } from './choices.ts';
import { HttpError } from './http.ts';
import { doctorPanel } from './pages.ts';
import { overallWord } from '../report.ts';
import { renderReportHtml } from './report-html.ts';
import type { HubMessage, RunRequest, WorkerJob, WorkerMessage } from './run-worker.ts';

const WORKER = new URL('./run-worker.ts', import.meta.url);
const TSX_LOADER = import.meta.resolve('tsx');
/** Finished runs kept for a page that asks for one again (by id). */
const KEEP_FINISHED = 20;
const HEARTBEAT_MS = 15_000;
const OUTPUT_LIMIT = 16 * 1024;

export type RunState = 'running' | 'finished' | 'failed' | 'cancelled';

export interface RunSummary {
  id: string;
  kind: RunRequest['kind'];
  exercise: { id: string; title: string };
  servers: Array<{ server: ServerChoice; label: string; title: string }>;
  state: RunState;
  startedAt: string;
}

export interface RunsOptions {
  /** How long a run may go on with no page watching it (default 5 s). */
  orphanMs?: number;
  /** How long a cancelled worker may take to exit before SIGKILL (default 10 s). */
  killMs?: number;
  /** The worker module (default run-worker.ts); the tests put a stuck or crashing one in its place. */
  workerFile?: URL;
  /**
   * Where a doctor run's result is written, as `doctor` writes it, and where the exercise pages read the
   * newest (default .hotpath/results/); the tests use a folder of their own.
   */
  resultsDir?: string;
}

interface StoredEvent {
  id: number;
  name: string;
  data: string;
}

interface LiveRun {
  summary: RunSummary;
  exercise: Exercise;
  events: StoredEvent[];
  watchers: Set<ServerResponse>;
  worker: ChildProcess;
  /** Server process groups alive in the worker, as it last reported them. */
  pids: number[];
  output: string;
  report?: RunReport;
  doctor?: DoctorResult;
  failure?: string;
  cancelReason?: string;
  orphanTimer?: NodeJS.Timeout;
  killTimer?: NodeJS.Timeout;
  ended: Promise<void>;
}

const FINAL_EVENTS = new Set(['report', 'doctor', 'failed', 'cancelled']);

export class Runs {
  private current: LiveRun | undefined;
  private readonly all = new Map<string, LiveRun>();
  private readonly orphanMs: number;
  private readonly killMs: number;
  private readonly workerFile: URL;
  private readonly resultsDir: string | undefined;
  private closing = false;

  constructor(options: RunsOptions = {}) {
    this.orphanMs = options.orphanMs ?? 5000;
    this.killMs = options.killMs ?? 10_000;
    this.workerFile = options.workerFile ?? WORKER;
    this.resultsDir = options.resultsDir;
  }

  /** The run in progress, if any. */
  active(): RunSummary | undefined {
    return this.current?.summary;
  }

  summary(id: string): RunSummary | undefined {
    return this.all.get(id)?.summary;
  }

  /** Starts a run, or refuses with a 409 that names the run in progress. */
  start(exercise: Exercise, request: RunRequest): RunSummary {
    if (this.closing) throw new HttpError(503, 'the hub is stopping');
    if (this.current) {
      const { id, kind, exercise: running, servers: its } = this.current.summary;
      const what = `${kind === 'doctor' ? 'the doctor on ' : ''}${its.map((s) => s.label).join(', ')}`;
      throw new HttpError(
        409,
        `a run is in progress: exercise ${running.id}, ${what} (run ${id}). ` +
          'One run at a time, so the figures are not disturbed: wait for it to finish or cancel it.',
        { running: this.current.summary },
      );
    }
    const byChoice = new Map(choicesOf(exercise).map((c) => [c.server, c]));
    const servers: ServerChoice[] = request.kind === 'doctor' ? [request.server] : request.servers;
    const summary: RunSummary = {
      id: randomUUID(),
      kind: request.kind,
      exercise: { id: exercise.manifest.id, title: exercise.manifest.title },
      servers: servers.map((server) => byChoice.get(server)!),
      state: 'running',
      startedAt: new Date().toISOString(),
    };
    const job: WorkerJob = { ...request, exercise: exercise.manifest.id };
    const worker = fork(this.workerFile, [JSON.stringify(job)], {
      execArgv: ['--import', TSX_LOADER],
      // Its own process group: a Ctrl-C in the hub's terminal reaches the hub, which ends the run in order.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Structured clone keeps what JSON loses in a report (an Infinity margin).
      serialization: 'advanced',
    });
    let resolveEnded!: () => void;
    const run: LiveRun = {
      summary,
      exercise,
      events: [],
      watchers: new Set(),
      worker,
      pids: [],
      output: '',
      ended: new Promise((resolve) => (resolveEnded = resolve)),
    };
    this.current = run;
    this.all.set(summary.id, run);
    this.prune();
    const { load } = exercise.manifest;
    this.emit(run, 'run', { ...summary, load: { path: load.path, connections: load.connections, warmupSeconds: load.warmupSeconds, durationSeconds: load.durationSeconds } });
    const collect = (chunk: Buffer) => (run.output = (run.output + chunk.toString()).slice(-OUTPUT_LIMIT));
    worker.stdout?.on('data', collect);
    worker.stderr?.on('data', collect);
    worker.on('message', (message: WorkerMessage) => this.onWorkerMessage(run, message));
    let ended = false;
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (ended) return;
      ended = true;
      this.onWorkerExit(run, code, signal);
      resolveEnded();
    };
    worker.on('error', (error) => {
      run.failure ??= `the run's process failed: ${error.message}`;
      // A process that never started sends no 'exit'.
      if (worker.pid === undefined) end(null, null);
    });
    worker.once('exit', end);
    this.watchOrOrphan(run);
    return summary;
  }

  /** Cancels a run; false when it is not running. */
  cancel(id: string, reason: string): boolean {
    const run = this.all.get(id);
    if (!run || run.summary.state !== 'running') return false;
    if (run.cancelReason !== undefined) return true;
    run.cancelReason = reason;
    this.emit(run, 'cancelling', { reason });
    // A channel that closes meanwhile: the worker is on its way out, or stuck; SIGKILL settles it.
    if (run.worker.connected) run.worker.send({ type: 'cancel' } satisfies HubMessage, (error) => error && this.kill(run));
    else this.kill(run);
    run.killTimer = setTimeout(() => this.kill(run), this.killMs);
    return true;
  }

  /**
   * Streams a run's events to a page: everything so far (after Last-Event-ID, for a reconnecting
   * EventSource), then live until the final event. Unknown run: 404.
   */
  watch(id: string, req: IncomingMessage, res: ServerResponse): void {
    const run = this.all.get(id);
    if (!run) throw new HttpError(404, `no run ${id}: it never existed, or it finished long ago`);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    const after = Number(req.headers['last-event-id']);
    for (const event of run.events) if (!(event.id <= after)) res.write(frame(event));
    if (run.summary.state !== 'running') {
      res.end();
      return;
    }
    run.watchers.add(res);
    clearTimeout(run.orphanTimer);
    const heartbeat = setInterval(() => res.write(': still running\n\n'), HEARTBEAT_MS);
    res.on('close', () => {
      clearInterval(heartbeat);
      run.watchers.delete(res);
      this.watchOrOrphan(run);
    });
  }

  /** Ends the run in progress (and its servers) and every stream; for the hub's close(). */
  async close(): Promise<void> {
    this.closing = true;
    const run = this.current;
    if (run) {
      this.cancel(run.summary.id, 'the hub is stopping');
      await run.ended;
    }
    for (const stored of this.all.values()) for (const res of stored.watchers) res.end();
  }

  private watchOrOrphan(run: LiveRun): void {
    if (run.summary.state !== 'running' || run.watchers.size > 0) return;
    clearTimeout(run.orphanTimer);
    run.orphanTimer = setTimeout(() => {
      if (run.watchers.size === 0) this.cancel(run.summary.id, `no page watched it for ${this.orphanMs / 1000} s`);
    }, this.orphanMs);
  }

  private onWorkerMessage(run: LiveRun, message: WorkerMessage): void {
    if (message?.type === 'event') this.emit(run, message.event.type, message.event);
    else if (message?.type === 'pids') run.pids = message.pids;
    else if (message?.type === 'report') run.report = message.report;
    else if (message?.type === 'doctor') run.doctor = message.result;
    else if (message?.type === 'failed') run.failure = message.message;
  }

  private onWorkerExit(run: LiveRun, code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(run.killTimer);
    clearTimeout(run.orphanTimer);
    // Killed before it could stop its servers: end their process groups here.
    if (signal === 'SIGKILL') for (const pid of run.pids) killGroup(pid);
    // A report that arrived before a late cancel is kept: its servers had already stopped.
    if (run.report) {
      run.summary.state = 'finished';
      let html: string;
      try {
        html = renderReportHtml(run.report);
      } catch (error) {
        html = `<p class="hp-error">the report could not be drawn: ${String(error)}</p>`;
      }
      this.emit(run, 'report', { report: run.report, html, overall: overallWord(run.report), recordedPass: this.recordPass(run.report) });
    } else if (run.doctor) {
      // Like a report, a doctor's result that arrived before a late cancel is kept.
      run.summary.state = 'finished';
      this.emit(run, 'doctor', keepDoctorResult(run.exercise, run.doctor, this.resultsDir));
    } else if (run.cancelReason !== undefined) {
      run.summary.state = 'cancelled';
      this.emit(run, 'cancelled', { reason: run.cancelReason, stoppedServers: true });
    } else {
      run.summary.state = 'failed';
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const tail = run.output.trim().split('\n').slice(-12).join('\n');
      const message = run.failure ?? `the run's process exited (${how}) before it finished${tail ? `:\n${tail}` : ''}`;
      this.emit(run, 'failed', { message });
    }
    for (const res of run.watchers) res.end();
    run.watchers.clear();
    if (this.current === run) this.current = undefined;
  }

  /** A passing verdict for the trainee's file is a pass, as `verify` records it. */
  private recordPass(report: RunReport): boolean {
    const mine = report.verdicts.find((v) => v.label === 'mine' && !v.symptom);
    if (!mine?.pass) return false;
    try {
      updateExercise(report.exercise.id, (p) => ({ ...p, passed: true, passedAt: p.passedAt ?? new Date().toISOString() }));
      return true;
    } catch {
      return false; // the progress file could not be written; the report still shows the pass
    }
  }

  private kill(run: LiveRun): void {
    try {
      run.worker.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private emit(run: LiveRun, name: string, payload: unknown): void {
    const event: StoredEvent = { id: run.events.length + 1, name, data: JSON.stringify(payload) };
    run.events.push(event);
    for (const res of run.watchers) res.write(frame(event));
    if (FINAL_EVENTS.has(name)) for (const res of run.watchers) res.end();
  }

  private prune(): void {
    const finished = [...this.all.values()].filter((r) => r.summary.state !== 'running');
    for (const run of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.all.delete(run.summary.id);
  }
}

/**
 * A doctor run's result, written as `doctor` writes it (so the CLI and the hub show the same newest
 * result), and the exercise page's doctor panel drawn with it, for the page to put in place of its own.
 */
function keepDoctorResult(exercise: Exercise, result: DoctorResult, resultsDir: string | undefined) {
  let file: string | undefined;
  let notWritten: string | undefined;
  try {
    file = relativeToRoot(writeDoctorResult(result, resultsDir));
  } catch (error) {
    notWritten = error instanceof Error ? error.message : String(error);
  }
  let html: string;
  try {
    html = doctorPanel(exercise, result);
  } catch (error) {
    html = `<section id="doctor"><h2>The doctor</h2><p class="hp-error">the result could not be drawn: ${escapeHtml(String(error))}</p></section>`;
  }
  return { result, html, ...(file !== undefined ? { file } : {}), ...(notWritten !== undefined ? { notWritten } : {}) };
}

function frame(event: StoredEvent): string {
  return `id: ${event.id}\nevent: ${event.name}\ndata: ${event.data}\n\n`;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
