// Each process of a server seen apart, the one the harness started and a cluster's workers: the CPU
// each used (from /proc) and how busy its event loop was (from the file its probe writes), over spans of
// time, one or summed over several (a server's turns).
import { processTreeTicks, TICKS_PER_SECOND } from './machine-load.ts';
import type { IsolateFigures } from './probe/messages.ts';

export interface ProcessFigures {
  pid: number;
  /** 'main': the process the harness started; 'worker': a cluster worker; 'other': a child without the probe. */
  role: 'main' | 'worker' | 'other';
  /** Cores it used: CPU time over wall time. */
  cores: number;
  /** Its event loop's utilization, 0 (idle) to 1 (always busy); absent without the probe. */
  utilization?: number;
}

/** What the meter needs of a running server. */
export interface MeteredServer {
  pid: number;
  /** The environment entry its processes carry: finds one that has left its tree (machine-load.ts, processTree). */
  envMarker?: string;
  loops(): Map<number, IsolateFigures>;
}

interface Reading {
  at: number;
  ticks: Map<number, number>;
  loops: Map<number, IsolateFigures>;
}

interface Sums {
  role: ProcessFigures['role'];
  cpuSeconds: number;
  wallSeconds: number;
  active: number;
  loop: number;
}

export class ProcessMeter {
  private from?: Reading;
  private readonly sums = new Map<number, Sums>();

  constructor(private readonly server: MeteredServer) {}

  /** Starts a span. */
  begin(): void {
    this.from = this.reading();
  }

  /** Ends the span begun last, adds it to the totals and returns its own figures; the next span begins now. */
  lap(): ProcessFigures[] {
    const to = this.reading();
    const from = this.from ?? to;
    this.from = to;
    const wallSeconds = (to.at - from.at) / 1000;
    const span: ProcessFigures[] = [];
    for (const [pid, ticks] of to.ticks) {
      // A process born during the span has all its CPU time and loop time in it.
      const cpuSeconds = (ticks - (from.ticks.get(pid) ?? 0)) / TICKS_PER_SECOND;
      const loop = to.loops.get(pid);
      const before = from.loops.get(pid);
      const active = loop ? loop.active - (before?.active ?? 0) : 0;
      const total = loop ? active + loop.idle - (before?.idle ?? 0) : 0;
      const role = pid === this.server.pid ? 'main' : loop?.worker ? 'worker' : 'other';
      const sums = this.sums.get(pid) ?? { role, cpuSeconds: 0, wallSeconds: 0, active: 0, loop: 0 };
      sums.role = role;
      sums.cpuSeconds += cpuSeconds;
      sums.wallSeconds += wallSeconds;
      sums.active += active;
      sums.loop += total;
      this.sums.set(pid, sums);
      span.push(figuresOf(pid, { role, cpuSeconds, wallSeconds, active, loop: total }));
    }
    return span;
  }

  /** Each process over every span so far, the main one first. */
  total(): ProcessFigures[] {
    return [...this.sums].map(([pid, sums]) => figuresOf(pid, sums)).sort((a, b) => Number(b.role === 'main') - Number(a.role === 'main') || a.pid - b.pid);
  }

  private reading(): Reading {
    return { at: performance.now(), ticks: processTreeTicks(this.server.pid, this.server.envMarker), loops: this.server.loops() };
  }
}

function figuresOf(pid: number, sums: Sums): ProcessFigures {
  return {
    pid,
    role: sums.role,
    cores: sums.wallSeconds > 0 ? sums.cpuSeconds / sums.wallSeconds : 0,
    ...(sums.loop > 0 ? { utilization: sums.active / sums.loop } : {}),
  };
}
