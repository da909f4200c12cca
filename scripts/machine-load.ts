// How busy the machine is with work that is not ours. A measurement shares the machine's cores with
// whatever else runs on it (a build, a browser, another test run), and on 2 cores one such program can
// halve what a server answers for a few seconds. Linux only (/proc); elsewhere nothing is known and
// nothing is waited for.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** A snapshot of the machine's CPU time and of this process tree's, in clock ticks. */
export interface CpuSnapshot {
  /** All cores' ticks so far, busy and idle. */
  total: number;
  /** All cores' busy ticks (user, nice, system). */
  busy: number;
  /** Busy ticks of each process in this process's tree (itself and its descendants: the servers it started). */
  own: Map<number, number>;
}

/** Reads /proc; undefined where there is none. */
export function cpuSnapshot(): CpuSnapshot | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  // cpu  user nice system idle iowait irq softirq steal ...
  const fields = stat.split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, busy: user + nice + system, own: ownTree() };
}

/**
 * Cores used by other programs between two snapshots: the machine's busy time less this process tree's,
 * over the wall time. A process of ours that ended in between counts as someone else's for its last
 * moments; servers live through a measurement, so that is rare.
 */
export function coresElsewhere(before: CpuSnapshot, after: CpuSnapshot, cores = os.availableParallelism()): number {
  const elapsed = (after.total - before.total) / cores;
  if (elapsed <= 0) return 0;
  let own = 0;
  for (const [pid, ticks] of after.own) own += ticks - (before.own.get(pid) ?? 0);
  return Math.max(0, (after.busy - before.busy - own) / elapsed);
}

/**
 * Waits until other programs use less than `threshold` cores over a quarter second, or `limitMs` at most.
 * Returns how long it waited, in milliseconds.
 */
export async function waitForQuietMachine(threshold: number, limitMs: number): Promise<number> {
  const started = performance.now();
  let before = cpuSnapshot();
  if (!before) return 0;
  while (performance.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = cpuSnapshot()!;
    if (coresElsewhere(before, after) < threshold) break;
    before = after;
  }
  return performance.now() - started;
}

/** utime + stime of this process and each of its descendants, by pid. */
function ownTree(): Map<number, number> {
  return processTreeTicks(process.pid);
}

/** Clock ticks a second in /proc's CPU times (USER_HZ, 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** utime + stime of a process and each of its descendants, by pid (empty where there is no /proc). */
export function processTreeTicks(root: number): Map<number, number> {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return new Map();
  }
  for (const name of entries) {
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // pid (comm) state ppid ... utime(14) stime(15): comm may hold spaces and parentheses, so count from the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const pid = Number(name);
    parents.set(pid, Number(rest[1]));
    ticks.set(pid, Number(rest[11]) + Number(rest[12]));
  }
  const own = new Map<number, number>();
  const children = new Map<number, number[]>();
  for (const [pid, parent] of parents) children.set(parent, [...(children.get(parent) ?? []), pid]);
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (ticks.has(pid)) own.set(pid, ticks.get(pid)!);
    queue.push(...(children.get(pid) ?? []));
  }
  return own;
}
