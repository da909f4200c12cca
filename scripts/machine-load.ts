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

/** CPU ticks of this process and each of its descendants (processStat: their ended children's included), by pid. */
function ownTree(): Map<number, number> {
  return processTreeTicks(process.pid);
}

/** Clock ticks a second in /proc's CPU times (USER_HZ, 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** A process as /proc/<pid>/stat shows it: its parent and group, its CPU time so far (its ended children's included) and when it started (clock ticks). */
export interface ProcessStat {
  ppid: number;
  pgid: number;
  ticks: number;
  started: number;
}

/**
 * A process and each of its descendants, by pid (empty where there is no /proc). With `envMarker` (an entry
 * of the environment, NAME=value), also every process whose environment holds it, and their descendants:
 * a process the server started in a session of its own and left to init (a double fork) is no longer its
 * descendant, and still carries the environment it was started with.
 */
export function processTree(root: number, envMarker?: string): Map<number, ProcessStat> {
  const stats = new Map<number, ProcessStat>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return new Map();
  }
  for (const name of entries) {
    const stat = processStat(Number(name));
    if (stat) stats.set(Number(name), stat); // else ended while we looked
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const queue = [root, ...(envMarker ? [...stats.keys()].filter((pid) => pid !== root && carries(pid, envMarker)) : [])];
  const tree = new Map<number, ProcessStat>();
  while (queue.length > 0) {
    const pid = queue.pop()!;
    const stat = stats.get(pid);
    if (!stat || tree.has(pid)) continue;
    tree.set(pid, stat);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** One process as /proc/<pid>/stat shows it; undefined once it has ended (or where there is no /proc). */
export function processStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // pid (comm) state ppid pgrp ... utime(14) stime(15) cutime(16) cstime(17) ... starttime(22): comm may hold
  // spaces and parentheses, so count from the last ')'. A child that ended and was waited for is in its
  // parent's cutime and cstime: one that lived and died between two readings is counted too (one alive at
  // the first reading is counted again for what it had used by then: more, never less).
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
  return { ppid: Number(rest[1]), pgid: Number(rest[2]), ticks, started: Number(rest[19]) };
}

/** Whether the process's environment (as it was started) holds `entry`; false where it cannot be read. */
function carries(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry);
  } catch {
    return false;
  }
}

/** CPU ticks of a process and each of its descendants (see processTree and processStat), by pid. */
export function processTreeTicks(root: number, envMarker?: string): Map<number, number> {
  return new Map([...processTree(root, envMarker)].map(([pid, { ticks }]) => [pid, ticks]));
}
