// What the doctor reads second by second while a load runs: the load generator's answers and p99, and the
// server's event loop, each process's CPU (a cluster's workers with their own loops), heap and active
// resources. Sampled while a phase runs, not while the server settles between phases.
import type { LoadPhase, LoadProgress } from '../load.ts';
import { ProcessMeter } from '../process-figures.ts';
import type { LoadSecond, ServerSecond } from '../result.ts';
import type { RunningServer } from '../server-process.ts';

export class Seconds {
  readonly load: LoadSecond[] = [];
  readonly server: ServerSecond[] = [];
  private readonly processes: ProcessMeter;
  private readonly counted = new Map<LoadPhase, number>();
  private readonly pending: Array<Promise<void>> = [];
  private timer?: NodeJS.Timeout;

  /** `phaseSeconds`: how many seconds each phase of the load lasts. */
  constructor(
    private readonly running: RunningServer,
    private readonly phaseSeconds: Partial<Record<LoadPhase, number>>,
  ) {
    this.processes = new ProcessMeter(running);
  }

  /** Starts sampling the server, once a second. */
  async start(): Promise<void> {
    await this.running.utilization(); // starts the main loop's interval
    this.processes.begin();
    this.timer = setInterval(() => this.sample(), 1000);
  }

  /** Stops sampling, once the last second's answers are in. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.pending);
  }

  /** Keeps a second of the load from the load generator's progress. */
  onLoad(progress: LoadProgress): void {
    const counted = this.counted.get(progress.phase) ?? 0;
    // autocannon ends with one more tick after its counter was reset: not a second of load.
    if (counted >= (this.phaseSeconds[progress.phase] ?? Infinity)) return;
    this.counted.set(progress.phase, counted + 1);
    this.load.push({ requests: progress.requestsLastSecond, ...(progress.latencyLastSecond ? { p99: progress.latencyLastSecond.p99 } : {}) });
  }

  private sample(): void {
    const cores: Record<number, number> = {};
    const workers: Record<number, number> = {};
    for (const p of this.processes.lap()) {
      cores[p.pid] = p.cores;
      if (p.role === 'worker' && p.utilization !== undefined) workers[p.pid] = p.utilization;
    }
    const sample = this.running.samples.at(-1);
    const second: ServerSecond = {
      cores,
      ...(Object.keys(workers).length > 0 ? { workers } : {}),
      ...(sample ? { heapUsed: sample.heapUsed, active: sample.activeResources } : {}),
    };
    this.server.push(second);
    this.pending.push(this.running.utilization().then((value) => void (value !== undefined && (second.utilization = value))));
  }
}
