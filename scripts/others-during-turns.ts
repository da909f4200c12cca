// What other programs did on the machine while each server took its turns. Turns put a drift of the
// machine on every server alike; a program that runs only while one server is loaded (another test run's
// bursts, or a process a server left outside its tree to slow the others down) does not. Each turn reads
// the cores used outside the harness's process tree (machine-load.ts), and a judged server whose turns
// were quieter or busier than another server's, by a clear margin over the median turn, fails: its ratios cannot be
// trusted (docs/measuring.md). Either way: programs that run only during its own turns lend it cores.
import { coresElsewhere, cpuSnapshot, processTreeTicks, type CpuSnapshot } from './machine-load.ts';
import type { MeteredServer } from './process-figures.ts';
import type { OthersInTurns, ServerRun } from './result.ts';
import { median } from './stats.ts';

/** How many more cores other programs may have used, at the median, during another server's turns than during the judged one's. */
export const OTHERS_GAP_CORES = 0.5;

/**
 * Reads other programs' cores over one turn: `begin` as it starts, `end` as it ends. The servers' own
 * processes are not other programs, those that left the harness's tree included (found by the environment
 * entry each server's processes carry).
 */
export class OthersMeter {
  private from?: CpuSnapshot;

  constructor(private readonly servers: MeteredServer[]) {}

  begin(): void {
    this.from = this.snapshot();
  }

  /** The cores other programs used since `begin`; undefined where there is no /proc. */
  end(): number | undefined {
    const to = this.snapshot();
    return this.from && to ? coresElsewhere(this.from, to) : undefined;
  }

  private snapshot(): CpuSnapshot | undefined {
    const machine = cpuSnapshot();
    if (!machine) return undefined;
    const own = new Map(machine.own);
    for (const server of this.servers) for (const [pid, ticks] of processTreeTicks(server.pid, server.envMarker)) own.set(pid, ticks);
    return { ...machine, own };
  }
}

/**
 * Each server's median over its turns, and for a judged one the other server's median furthest from its
 * own, either way: programs that run only while another server is loaded slow that one down, and programs
 * that run only while the judged one is loaded lend it cores.
 */
export function judgeOthersInTurns(runs: ServerRun[], judged: (run: ServerRun) => boolean): void {
  const medians = new Map<ServerRun, number>();
  for (const run of runs) {
    const readings = (run.turns ?? []).map((t) => t.othersCores).filter((c): c is number => c !== undefined);
    if (readings.length > 0) medians.set(run, median(readings));
  }
  for (const [run, cores] of medians) {
    const others: OthersInTurns = { cores };
    if (judged(run)) {
      const furthest = [...medians].filter(([other]) => other !== run).sort((a, b) => Math.abs(b[1] - cores) - Math.abs(a[1] - cores))[0];
      if (furthest) Object.assign(others, { other: furthest[1], otherLabel: furthest[0].label });
    }
    run.othersInTurns = others;
  }
}

/** Why a judged server's turns cannot be compared with the others', or undefined. */
export function othersInTurnsProblem(run: Pick<ServerRun, 'othersInTurns'>): string | undefined {
  const others = run.othersInTurns;
  if (others?.other === undefined || Math.abs(others.other - others.cores) <= OTHERS_GAP_CORES) return undefined;
  return (
    `during its turns: other programs on the machine used ${others.cores.toFixed(2)} cores (the median turn), and ${others.other.toFixed(2)} during ` +
    `${others.otherLabel}'s: the turns were not alike (programs that run only while one server is loaded), so its ratios cannot be trusted`
  );
}
