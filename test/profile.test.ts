import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderName, tail, warningsIn, writeProfile } from '../scripts/commands/profile.ts';
import { loadExercise } from '../scripts/exercises.ts';
import { ROOT } from '../scripts/paths.ts';
import { LOAD_LINE, loadEventIn, ProfileError, runClinic } from '../scripts/profile/clinic.ts';
import { profileOfExited } from '../scripts/profile/cpu-run.ts';
import { hottestFunctions, mergeTrees, profileToTree, walk, type CpuProfile, type Frame } from '../scripts/profile/cpu-tree.ts';
import { embeddedProfile, flameGraphHtml } from '../scripts/profile/flame-html.ts';
import { brokenReason, chooseTool, limitNote } from '../scripts/profile/tools.ts';
import { liveServerCount, startServer } from '../scripts/server-process.ts';
import { fixture } from './helpers.ts';

const frame = (id: number, functionName: string, url: string, lineNumber: number, children: number[] = []) => ({
  id,
  callFrame: { functionName, scriptId: '1', url, lineNumber, columnNumber: 4 },
  children,
});

// (root) ─┬─ main (node 2) ── hash (node 4)
//         ├─ (garbage collector) (node 3)
//         └─ main (node 5, the same function recorded twice) ── hash (node 6)
const SMALL: CpuProfile = {
  nodes: [
    frame(1, '(root)', '', -1, [2, 3, 5]),
    frame(2, 'main', 'file:///srv/app.ts', 0, [4]),
    frame(3, '(garbage collector)', '', -1),
    frame(4, 'hash', 'file:///srv/app.ts', 9),
    frame(5, 'main', 'file:///srv/app.ts', 0, [6]),
    frame(6, 'hash', 'file:///srv/app.ts', 9),
  ],
  startTime: 1000,
  // Samples at 1100, 1110, 1130, 1160, 1200, 1250; each lasts until the next, the last until 1300.
  endTime: 1300,
  samples: [2, 4, 4, 3, 6, 5],
  timeDeltas: [100, 10, 20, 30, 40, 50],
};

const brief = (f: Frame): unknown => ({ name: f.name, file: f.file, line: f.line, kind: f.kind, self: f.self, total: f.total, children: f.children.map(brief) });

/** A profile that failed says what clinic, the server and the load printed, as the CLI does. */
function withOutput(error: unknown): never {
  if (error instanceof ProfileError && error.output) error.message += `\n--- what was printed ---\n${tail(error.output)}`;
  throw error;
}

describe('CPU profile to flame graph tree', () => {
  it('weighs each sample by the time to the next, and merges the same function under one parent', () => {
    const tree = profileToTree(SMALL, { root: '/srv' });
    expect(brief(tree)).toEqual({
      name: '(root)',
      file: '',
      line: 0,
      kind: 'native',
      self: 0,
      total: 200,
      children: [
        {
          name: 'main',
          file: 'app.ts',
          line: 1,
          kind: 'app',
          self: 10 + 50,
          total: 160,
          children: [{ name: 'hash', file: 'app.ts', line: 10, kind: 'app', self: 20 + 30 + 50, total: 100, children: [] }],
        },
        { name: '(garbage collector)', file: '', line: 0, kind: 'native', self: 40, total: 40, children: [] },
      ],
    });
    expect(hottestFunctions(tree).map((hot) => [hot.name, hot.self])).toEqual([
      ['hash', 100],
      ['main', 60],
      ['(garbage collector)', 40],
    ]);
  });

  it('maps positions through a locate function (source maps), and falls back to hit counts without samples', () => {
    const hits: CpuProfile = {
      startTime: SMALL.startTime,
      endTime: SMALL.endTime,
      nodes: SMALL.nodes.map((node) => ({ ...node, hitCount: node.id === 4 ? 3 : node.id === 3 ? 1 : 0 })),
    };
    const tree = profileToTree(hits, { locate: (url, line, column) => (url.endsWith('app.ts') ? { line: line + 100, column } : undefined) });
    const [main, gc] = tree.children;
    expect([main!.name, main!.line, main!.file, main!.total]).toEqual(['main', 100, '/srv/app.ts', 225]);
    expect([main!.children[0]!.name, main!.children[0]!.line]).toEqual(['hash', 109]);
    expect([gc!.name, gc!.total]).toEqual(['(garbage collector)', 75]);
  });
});

describe('flame graph page', () => {
  it('embeds the tree so that no frame name can end its script, and reads it back', () => {
    const tree = profileToTree(SMALL);
    tree.children[0]!.name = '</script><script>alert(1)</script>';
    const html = flameGraphHtml(tree, { title: 'a <title>', details: ['one & two'], lookFor: 'find `hash`' });
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('<code>hash</code>');
    expect(html).not.toMatch(/https?:\/\//); // nothing to fetch from anywhere
    const embedded = embeddedProfile(html);
    expect(embedded.tree.children[0]!.name).toBe('</script><script>alert(1)</script>');
    expect(embedded.tree.total).toBe(200);
    expect(embedded.hottest[0]!.name).toBe('hash');
  });
});

describe('profile tools and helpers', () => {
  it('falls back to cpu where a clinic tool is known broken, and says why in one line', () => {
    expect(chooseTool(undefined, 20)).toEqual({ tool: 'cpu' });
    expect(chooseTool(undefined, 24)).toEqual({ tool: 'cpu' });
    expect(chooseTool('flame', 20)).toEqual({ tool: 'flame' });
    expect(chooseTool('cpu', 20)).toEqual({ tool: 'cpu' });
    for (const tool of ['doctor', 'heap'] as const) {
      const choice = chooseTool(tool, 20);
      expect(choice.tool).toBe('cpu');
      expect(choice.fallback).toMatch(/does not work on Node 20 here .*--cpu-prof instead/);
      expect(choice.fallback).not.toContain('\n');
      expect(chooseTool(tool, 24)).toEqual({ tool });
    }
  });

  it('notes the measured limit of clinic flame on Node 24 only', () => {
    expect(limitNote('flame', 24)).toMatch(/unnamed block.*--tool cpu/);
    expect(limitNote('flame', 20)).toBeUndefined();
    expect(limitNote('cpu', 24)).toBeUndefined();
  });

  it("reads the load script's events on clinic's output, also after a part of a longer write", () => {
    const event = { type: 'progress', progress: { phase: 'measured', second: 2 } };
    expect(loadEventIn(`${LOAD_LINE}${JSON.stringify(event)}`)).toEqual(event);
    // clinic passed on 4 KB of a server's line, then the event was written, then the rest of that line.
    expect(loadEventIn(`${'x'.repeat(4096)}${LOAD_LINE}${JSON.stringify(event)}`)).toEqual(event);
    expect(loadEventIn('seed service listening on http://127.0.0.1:3000')).toBeUndefined();
    expect(loadEventIn(`${LOAD_LINE}{"type":"done","res`)).toBeUndefined();
  });

  it('finds the warnings a server printed, each with its stack', () => {
    const output = [
      'seed service listening on http://127.0.0.1:3000',
      '(node:4242) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 after listeners added to [Server]',
      '    at _addListener (node:events:591:17)',
      '    at attachAfterEvent (file:///srv/server.ts:24:12)',
      'an unrelated line',
      '(node:4242) [DEP0005] DeprecationWarning: Buffer() is deprecated',
    ].join('\n');
    expect(warningsIn(output)).toEqual([
      '(node:4242) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 after listeners added to [Server]\n' +
        '    at _addListener (node:events:591:17)\n    at attachAfterEvent (file:///srv/server.ts:24:12)',
      '(node:4242) [DEP0005] DeprecationWarning: Buffer() is deprecated',
    ]);
  });

  it("makes clinic flame read the server's main-thread V8 log, the largest, not its module loader thread's", () => {
    const require = createRequire(import.meta.url);
    require('../scripts/profile/pick-main-isolate.cjs');
    const v8 = require(require.resolve('0x/platform/v8.js', { paths: [path.dirname(require.resolve('@clinic/flame'))] })) as {
      getIsolateLog(dir: string, pid: number): string | undefined;
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-isolates-'));
    try {
      // Named so that the loader's log comes first in the listing.
      writeFileSync(path.join(dir, 'isolate-0x1000-4321-4321-v8.log'), 'x'.repeat(100));
      writeFileSync(path.join(dir, 'isolate-0x9000-4321-4321-v8.log'), 'x'.repeat(10_000));
      writeFileSync(path.join(dir, 'isolate-0x9999-55-55-v8.log'), 'x'.repeat(100_000)); // another process's
      expect(v8.getIsolateLog(dir, 4321)).toBe('isolate-0x9000-4321-4321-v8.log');
      expect(v8.getIsolateLog(dir, 55)).toBe('isolate-0x9999-55-55-v8.log');
      expect(v8.getIsolateLog(dir, 7)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names a profile folder by exercise, server, tool and time', () => {
    expect(folderName('01-seed-service-slows-down', 'stage 1', 'cpu', new Date('2026-03-04T05:06:07Z'))).toBe('01-seed-service-slows-down-stage-1-cpu-20260304-050607');
  });

  it('asks a server to exit normally, so that --cpu-prof writes its profile', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-exit-'));
    try {
      const server = await startServer(fixture('answers.ts'), { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
      const exit = await server.exitNormally();
      expect(exit).toMatchObject({ code: 0, expected: true });
      expect(readdirSync(dir).some((name) => name.includes(`.${server.pid}.0.`) && name.endsWith('.cpuprofile'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("merges a cluster's workers into the profile: their frames are in the tree, their files kept by pid, nothing else left", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-cluster-profile-'));
    try {
      const server = await startServer(fixture('cluster.ts'), { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
      // Only the workers answer, each /spin 20 ms of their CPU.
      for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/spin`)).text();
      await server.exitNormally();
      const { tree, processes, file } = await profileOfExited(server, dir, {});
      expect(processes).toBe(3);
      expect(path.basename(file)).toBe('server.cpuprofile');
      const names = readdirSync(dir).sort();
      expect(names).toHaveLength(3);
      expect(names[0]).toBe('server.cpuprofile');
      expect(names.slice(1).every((name) => /^worker-\d+\.cpuprofile$/.test(name))).toBe(true);
      const handler = [...walk(tree)].map(({ frame }) => frame).filter((f) => f.file === 'test/fixtures/servers/cluster.ts' && f.name === '(anonymous)');
      expect(handler.reduce((sum, f) => sum + f.total, 0)).toBeGreaterThan(200_000); // of the 400 ms of spinning, in microseconds
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('merges trees: the same call paths summed under one root', () => {
    const one = profileToTree(SMALL, { root: '/srv' });
    const merged = mergeTrees([profileToTree(SMALL, { root: '/srv' }), profileToTree(SMALL, { root: '/srv' })]);
    expect(merged.total).toBe(2 * one.total);
    expect(merged.children.map((c) => [c.name, c.total])).toEqual(one.children.map((c) => [c.name, 2 * c.total]));
  });
});

/** Processes that run in, or name, this folder: what a profile run must not leave behind. */
function processesIn(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (command.includes(dir) || cwd.startsWith(dir)) found.push(`${pid}: ${command}`);
    } catch {
      // It exited while we looked, or is not ours to read.
    }
  }
  return found;
}

/** Leftovers of profilers at the repository's root and in the current directory. */
function strayFiles(): string[] {
  return [ROOT, process.cwd()].flatMap((dir) =>
    readdirSync(dir).filter((name) => /^(\.clinic|node_trace\..*\.log|isolate-0x.*\.log|CPU\..*\.cpuprofile|.*\.heapprofile|\d+\.clinic-.*)$/.test(name)),
  );
}

describe('clinic flame on a server that dies under the load', () => {
  it.runIf(brokenReason('flame') === undefined)('fails with the exit code, not a flame graph of the start alone', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-clinic-'));
    try {
      const profile = { path: '/', connections: 2, warmupSeconds: 1, durationSeconds: 1 };
      const run = runClinic({ tool: 'flame', serverFile: fixture('crashes-on-request.ts'), nodeFlags: [], env: {}, load: profile, dir, timeoutMs: 60_000, onProgress: () => {}, onStatus: () => {} });
      await expect(run).rejects.toThrow(/^the server exited with code 3 during the load under clinic flame$/);
      expect(processesIn(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('workshop profile on exercise 01 (real runs)', () => {
  let profilesDir = '';
  beforeAll(() => {
    profilesDir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-profiles-'));
  });
  afterAll(() => {
    if (profilesDir) rmSync(profilesDir, { recursive: true, force: true });
  });

  it('--tool cpu on the broken server: a flame graph whose data holds the leaking listener and its hashing', async () => {
    const before = strayFiles();
    const exercise = await loadExercise('01-seed-service-slows-down');
    const result = await writeProfile(exercise, { choice: 'broken', tool: 'cpu', traceWarnings: false, profilesDir });
    expect(result.tool).toBe('cpu');
    expect(readdirSync(result.dir).sort()).toEqual(['flame.html', 'server.cpuprofile']);

    const { tree, hottest } = embeddedProfile(readFileSync(result.html, 'utf8'));
    // The 'after' listener is the anonymous function that server.on('after', ...) adds in the shipped file, called by emit().
    const shipped = 'solutions/01-seed-service-slows-down/0-as-shipped.ts';
    const lineOf = (text: string) => readFileSync(path.join(ROOT, shipped), 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
    const listenerLine = lineOf("server.on('after'");
    const hashLine = lineOf('function sha512Hex');
    const parents = new Map<Frame, Frame>();
    for (const { frame } of walk(tree)) for (const child of frame.children) parents.set(child, frame);
    const listeners = [...walk(tree)].map(({ frame }) => frame).filter((f) => f.file === shipped && f.line === listenerLine);
    expect(listeners.length).toBeGreaterThan(0);
    expect(listeners.every((f) => f.name === '(anonymous)')).toBe(true);
    // Called by emit(); a sample or two may show it under restify's caller when V8 inlined emit there.
    const listenerTime = listeners.filter((f) => parents.get(f)?.name === 'emit').reduce((sum, f) => sum + f.total, 0);
    expect(listenerTime / tree.total).toBeGreaterThan(0.25);
    // Under it, sha512Hex and the hash's update.
    const hashing = listeners.flatMap((f) => [...walk(f)].map(({ frame }) => frame)).filter((f) => f.name === 'sha512Hex' && f.file === shipped && f.line === hashLine);
    expect(hashing.length).toBeGreaterThan(0);
    expect(hashing.some((f) => f.children.some((c) => c.name === 'update' && c.file === 'node:internal/crypto/hash'))).toBe(true);
    expect(hottest.slice(0, 3).some((hot) => hot.file === shipped && hot.line === listenerLine)).toBe(true);

    expect(liveServerCount()).toBe(0);
    expect(processesIn(profilesDir)).toEqual([]);
    expect(strayFiles()).toEqual(before);
  });

  it.runIf(brokenReason('flame') === undefined)('--tool flame writes clinic flame\'s HTML, with the shipped file\'s frames in it', async () => {
    const before = strayFiles();
    const exercise = await loadExercise('01-seed-service-slows-down');
    const result = await writeProfile(exercise, { choice: 'broken', tool: 'flame', traceWarnings: false, profilesDir }).catch(withOutput);
    expect(result.tool).toBe('flame');
    expect(path.basename(result.html)).toMatch(/^\d+\.clinic-flame\.html$/);
    expect(statSync(result.html).size).toBeGreaterThan(100_000);
    const html = readFileSync(result.html, 'utf8');
    // The shipped file's frames. sha512Hex is in most runs, but V8 sometimes inlines it into the listener,
    // and clinic's tick sampling then shows its time under the listener's own frame.
    expect(html).toContain('0-as-shipped.ts');
    // clinic's data folder beside the HTML, and nothing else: no 0x working files, no trace logs.
    const pid = path.basename(result.html).split('.')[0];
    expect(readdirSync(result.dir).sort()).toEqual([`${pid}.clinic-flame`, `${pid}.clinic-flame.html`]);
    expect(existsSync(path.join(result.dir, `${pid}.clinic-flame`, `${pid}.clinic-flame-samples`))).toBe(true);

    expect(liveServerCount()).toBe(0);
    expect(processesIn(profilesDir)).toEqual([]);
    expect(strayFiles()).toEqual(before);
  });
});
