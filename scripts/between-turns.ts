// What a server does while the others of its verdict take their turns. A server that is idle then pays
// for all its answers in its own turns; one that works ahead (answers made before they are asked for) or
// leaves work behind it (a queue it drains later) is measured on only part of its cost. Its processes'
// CPU over those spans is recorded, and a server that is judged may use little more than the shipped
// server does then (docs/measuring.md).
import { ProcessMeter, type MeteredServer } from './process-figures.ts';
import type { BetweenTurns, ServerRun } from './result.ts';

/**
 * The cores a judged server may use between its turns: this much, or twice the shipped server's where
 * that is more (a shipped server with work of its own then: 02's uploads, 06's reloads of a growing app).
 */
export const REST_CORES = 0.25;

/** Sums a server's processes' CPU over the spans from the end of each of its turns to the start of its next. */
export class RestMeter {
  private readonly meter: ProcessMeter;
  private since?: number;
  private seconds = 0;
  private cpuSeconds = 0;

  constructor(server: MeteredServer) {
    this.meter = new ProcessMeter(server);
  }

  /** Its turn is over: the others' begin. */
  begin(): void {
    this.meter.begin();
    this.since = performance.now();
  }

  /** Its next turn begins (or the turns are over): the span since `begin` counts. */
  end(): void {
    if (this.since === undefined) return;
    const seconds = (performance.now() - this.since) / 1000;
    this.cpuSeconds += this.meter.lap().reduce((sum, p) => sum + p.cores * seconds, 0);
    this.seconds += seconds;
    this.since = undefined;
  }

  figures(): BetweenTurns | undefined {
    return this.seconds > 0 ? { cores: this.cpuSeconds / this.seconds, seconds: this.seconds } : undefined;
  }
}

/** Sets the most each judged server may use between its turns, from the shipped server's own figure. */
export function judgeBetweenTurns(runs: ServerRun[], judged: (run: ServerRun) => boolean): void {
  const shipped = runs.find((r) => r.role === 'broken')?.betweenTurns;
  for (const run of runs) {
    if (run.betweenTurns && judged(run)) run.betweenTurns.atMost = Math.max(REST_CORES, 2 * (shipped?.cores ?? 0));
  }
}

/** Why a server failed for what it did between its turns, or undefined. */
export function betweenTurnsProblem(run: Pick<ServerRun, 'betweenTurns'>): string | undefined {
  const rest = run.betweenTurns;
  if (rest?.atMost === undefined || rest.cores <= rest.atMost) return undefined;
  return (
    `between its turns: its processes used ${rest.cores.toFixed(2)} cores while the other servers took theirs (over ${rest.seconds.toFixed(0)} s; ` +
    `at most ${rest.atMost.toFixed(2)}): work done ahead of its turns or left behind them, whose cost its turns' figures do not count`
  );
}
