// SIGTERM to the npm process alone, as a supervisor or an editor's stop button sends it: npm passes it to its
// `sh -c`, which dies without passing it on, and the CLI is left to init. It must notice and end everything
// it started, as for SIGTERM to itself. Each case starts the command for real through npm or npx, follows
// its process tree in /proc, signals the npm process only, then checks that the whole tree is gone within
// 2 s and that no port it listened on is still open.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/paths.ts';
import { freePort, isPortFree } from '../scripts/server-process.ts';
import { isAlive } from './helpers.ts';
import { tempFolder } from './temp-folder.ts';

const LIMIT_MS = 2000;
const stateDir = tempFolder('hotpath-parent-exit-');
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false' };
beforeAll(() => {
  env.HOTPATH_PROGRESS_FILE = path.join(stateDir(), 'progress.json');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process's parent, from /proc/<pid>/stat (the fields after the command name, which may hold spaces). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  return parentOf;
}

/** TCP ports in LISTEN state by socket inode, from /proc/net/tcp and tcp6. */
function listeningPorts(): Map<string, number> {
  const byInode = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') byInode.set(fields[9]!, parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return byInode;
}

/**
 * Follows the tree under one process: every 50 ms, the children of every process seen so far, and the ports
 * any of them listens on. A process keeps its place once seen, so one left to init is still followed.
 */
class Tree {
  readonly pids: Set<number>;
  readonly ports = new Set<number>();
  private readonly timer: NodeJS.Timeout;

  constructor(root: number) {
    this.pids = new Set([root]);
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }

  sample(): void {
    const parentOf = parents();
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, parent] of parentOf) {
        if (this.pids.has(parent) && !this.pids.has(pid)) {
          this.pids.add(pid);
          grew = true;
        }
      }
    }
    const listening = listeningPorts();
    for (const pid of this.alive()) {
      let fds: string[] = [];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          const port = inode && listening.get(inode);
          if (port) this.ports.add(port);
        } catch {
          // Closed meanwhile.
        }
      }
    }
  }

  alive(): number[] {
    return [...this.pids].filter(isAlive);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

interface Started {
  npm: ChildProcess;
  tree: Tree;
  output: () => string;
  /** Settles when the npm process has exited and every holder of its pipes has closed them. */
  closed: Promise<unknown>;
}

function startThroughNpm(command: string, args: string[]): Started {
  // Its own process group, as a terminal would give it; only the npm process is signalled.
  const npm = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_000));
  npm.stdout!.on('data', collect);
  npm.stderr!.on('data', collect);
  const closed = new Promise((resolve) => npm.once('close', resolve));
  return { npm, tree: new Tree(npm.pid!), output: () => output, closed };
}

/** SIGTERM to the npm process only; then how long until no process of its tree is left, at most 10 s. */
async function terminateNpm({ npm, tree }: Started): Promise<{ ms: number; left: number[] }> {
  tree.sample();
  const started = performance.now();
  process.kill(npm.pid!, 'SIGTERM');
  let left = tree.alive();
  while (left.length > 0 && performance.now() - started < 10_000) {
    await sleep(20);
    left = tree.alive();
  }
  const ms = performance.now() - started;
  tree.stop();
  return { ms, left };
}

/** Whatever is left, by pid: the group spawned here and every process seen in its tree. */
function cleanUp({ npm, tree }: Started): void {
  tree.stop();
  try {
    process.kill(-npm.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
  for (const pid of tree.alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

async function expectAllGone(started: Started, what: string): Promise<void> {
  const { ms, left } = await terminateNpm(started);
  process.stderr.write(`${what}: ${started.tree.pids.size} processes, ports ${[...started.tree.ports].join(', ')}; all gone ${Math.round(ms)} ms after SIGTERM to npm\n`);
  expect(left, `${what}: processes left after SIGTERM to npm:\n${started.output()}`).toEqual([]);
  expect(ms, `${what}: the last process ended ${Math.round(ms)} ms after SIGTERM to npm`).toBeLessThanOrEqual(LIMIT_MS);
  for (const port of started.tree.ports) expect(await isPortFree(port), `port ${port} still open`).toBe(true);
}

/** Everything the tree wrote: its pipes close once the last process holding them is gone (at most 5 s). */
async function finalOutput({ closed, output }: Started): Promise<string> {
  await Promise.race([closed, sleep(5000)]);
  return output();
}

/** Polls until `ready` holds, at most 30 s; fails at once, with the output, if the npm process has exited. */
async function until(started: Started, what: string, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!(await ready())) {
    const exited = started.npm.exitCode !== null || started.npm.signalCode !== null;
    if (exited || performance.now() > deadline) throw new Error(`${exited ? 'npm exited' : 'timed out'} before ${what}:\n${started.output()}`);
    await sleep(100);
  }
}

/** One of the tree's processes listens on a port other than these. */
const listens = (tree: Tree, besides: number[] = []) => () => [...tree.ports].some((port) => !besides.includes(port));

describe('SIGTERM to the npm process alone ends everything it started', () => {
  it('npm start: the hub, its live run and the run\'s server', async () => {
    const port = await freePort();
    const started = startThroughNpm('npm', ['start', '--', '--port', String(port)]);
    const events = new AbortController();
    try {
      const url = `http://127.0.0.1:${port}`;
      await until(started, 'the hub answered', async () => (await fetch(`${url}/api/runs`).catch(() => undefined))?.ok === true);
      const res = await fetch(`${url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ exercise: '01', servers: ['broken'] }) });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      const { id } = (await res.json()) as { id: string };
      // A page watching the run, so the hub does not cancel it as unwatched before the signal.
      void fetch(`${url}/api/runs/${id}/events`, { signal: events.signal })
        .then((r) => r.body?.pipeTo(new WritableStream()))
        .catch(() => {});
      await until(started, "the run's server listened", listens(started.tree, [port]));
      await expectAllGone(started, 'npm start with a live run');
      expect(started.tree.ports.has(port)).toBe(true);
      // Through the same path as SIGTERM to the CLI: the live run cancelled in order, not just killed.
      expect(await finalOutput(started)).toMatch(/parent process \(pid \d+\) ended: stopping the servers[\s\S]*cancelled the live run of 01/);
    } finally {
      events.abort();
      cleanUp(started);
    }
  });

  it('npm run workshop -- verify 01, under load', async () => {
    const started = startThroughNpm('npm', ['run', 'workshop', '--', 'verify', '01']);
    try {
      await until(started, 'a server listened', listens(started.tree));
      await sleep(1000); // into the load
      await expectAllGone(started, 'npm run workshop -- verify 01');
      expect(await finalOutput(started)).toMatch(/parent process \(pid \d+\) ended: stopping the servers/);
    } finally {
      cleanUp(started);
    }
  });

  it('npx workshop verify 01, under load', async () => {
    const started = startThroughNpm('npx', ['workshop', 'verify', '01']);
    try {
      await until(started, 'a server listened', listens(started.tree));
      await sleep(1000);
      await expectAllGone(started, 'npx workshop verify 01');
      expect(await finalOutput(started)).toMatch(/parent process \(pid \d+\) ended: stopping the servers/);
    } finally {
      cleanUp(started);
    }
  });
});
