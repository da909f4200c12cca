// The hub's routes on a real server (port 0): pages, assets, the API's refusals, live runs of exercise
// 01's broken server and the doctor on its ceiling (a few seconds of load each: run this file under the
// load lock).
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { hubPortOption } from '../scripts/commands/start.ts';
import { startHub, type Hub } from '../scripts/hub/server.ts';
import type { DoctorResult } from '../scripts/doctor/result.ts';
import { latestDoctorResult, writeDoctorResult } from '../scripts/results.ts';
import { loadExercise } from '../scripts/exercises.ts';
import { ROOT } from '../scripts/paths.ts';
import { turnsOf } from '../scripts/steady-turns.ts';
import { freePort } from '../scripts/server-process.ts';
import { UNREVEALED_STAGE } from '../scripts/bench.ts';
import { isAlive } from './helpers.ts';

const EX = '01-seed-service-slows-down';
let hub: Hub;
let dir: string;
const savedProgress = process.env.HOTPATH_PROGRESS_FILE;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hotpath-hub-test-'));
  process.env.HOTPATH_PROGRESS_FILE = path.join(dir, 'progress.json');
  hub = await startHub({ port: 0, orphanMs: 1000, resultsDir: path.join(dir, 'results') });
});

afterAll(async () => {
  await hub?.close();
  if (savedProgress === undefined) delete process.env.HOTPATH_PROGRESS_FILE;
  else process.env.HOTPATH_PROGRESS_FILE = savedProgress;
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json?: Record<string, unknown> & { error?: string };
}

/** A request with the path sent exactly as written (fetch would normalise `..` away). */
function request(method: string, rawPath: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: hub.port, method, path: rawPath, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        let json;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const get = (rawPath: string, headers?: Record<string, string>) => request('GET', rawPath, { headers });
const post = (rawPath: string, body: unknown, headers: Record<string, string> = {}) =>
  request('POST', rawPath, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

/** Bytes written straight to the socket: for what an HTTP client would refuse to send. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(hub.port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

interface SseEvent {
  id: string;
  event: string;
  data: any;
}

/** Follows a run's server-sent events until the stream ends or `stop` says so; `abort` closes it early. */
function events(id: string, options: { lastEventId?: number; stop?: (e: SseEvent) => boolean } = {}) {
  const list: SseEvent[] = [];
  let req: http.ClientRequest;
  const done = new Promise<SseEvent[]>((resolve, reject) => {
    const headers: Record<string, string> = options.lastEventId ? { 'last-event-id': String(options.lastEventId) } : {};
    req = http.get({ host: '127.0.0.1', port: hub.port, path: `/api/runs/${id}/events`, headers }, (res) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          const data = field('data');
          if (data === undefined) continue;
          const event = { id: field('id')!, event: field('event')!, data: JSON.parse(data) };
          list.push(event);
          if (options.stop?.(event)) {
            req.destroy();
            resolve(list);
          }
        }
      });
      res.on('end', () => resolve(list));
      res.on('close', () => resolve(list));
    });
    req.on('error', (error) => (req.destroyed ? resolve(list) : reject(error)));
  });
  return { done, abort: () => req.destroy() };
}

/**
 * Live processes whose command line contains `child` and whose parent's contains `parent`, the parent
 * started by this test process (its hubs run in process), from /proc: the browser tests' hub runs beside.
 */
function processes(child: string, parent: string): number[] {
  const cmdline = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      return '';
    }
  };
  const parentOf = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]!;
    } catch {
      return '';
    }
  };
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && cmdline(p).includes(child) && cmdline(parentOf(p)).includes(parent) && parentOf(parentOf(p)) === String(process.pid))
    .map(Number)
    .filter((pid) => isAlive(pid));
}

/** Exercise servers started by a hub run worker. */
const serversOfRunWorkers = () => processes('probe/exercise-server.js', 'hub/run-worker.ts');

describe('pages', () => {
  it('home: every exercise with its progress, the next one highlighted, the opening and method decks', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`<tr class="hp-exercise hp-next" data-exercise="${EX}" data-status="not-yet">`);
    expect(page.body).toContain('data-exercise="09-one-core-busy"');
    expect(page.body).toContain('href="/slides/00-opening"');
    expect(page.body).toContain('href="/slides/00-method"');
    expect(page.body).toContain(`<a class="hp-deck-link" href="/slides/${EX}">`);
    expect(page.body).toContain(`<a id="next-link" href="/exercises/${EX}">`);
  });

  it('an exercise: what the CLI accepts redirects to its canonical page; the page has the brief, hints and live runs', async () => {
    for (const name of ['01', '1', 'seed-service-slows-down', 'etag-listener-leak', '01-etag-listener-leak']) {
      const answer = await get(`/exercises/${name}`);
      expect(answer.status).toBe(308);
      expect(answer.headers.location).toBe(`/exercises/${EX}`);
    }
    const page = await get(`/exercises/${EX}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<article id="brief"');
    expect(page.body).toContain('<h1>01 · The seed service that slows down</h1>');
    expect(page.body).toMatch(/<pre class="hljs"><code class="hljs language-sh">/);
    expect(page.body).toContain('<button id="hint-next" type="button">Show hint 1 of 5</button>');
    expect(page.body).toContain(`<section id="live" class="hp-live" data-exercise="${EX}"`);
    expect(page.body).toContain('<script src="/assets/live.js" defer></script>');
  });

  it('an unknown exercise is a 404 that says which exist: JSON for a client, a page for a browser', async () => {
    const answer = await get('/exercises/99');
    expect(answer.status).toBe(404);
    expect(answer.json?.error).toMatch(/unknown exercise "99".*Exercises: 01-seed-service-slows-down/);
    const page = await get('/exercises/nope', { accept: 'text/html,*/*' });
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('unknown exercise &quot;nope&quot;');
  });

  it('hints: one more per POST, kept in the same progress file as the CLI\'s hint command, shown on the pages', async () => {
    const first = await post('/api/exercises/01/hints', {});
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ shown: 1, total: 5, button: 'Show hint 2 of 5' });
    const second = await post(`/api/exercises/${EX}/hints`, {});
    expect(second.json).toMatchObject({ shown: 2, statusText: '2 of 5 hints seen.', exerciseStatus: '2 hints seen' });
    expect((second.json!.hints as string[])[1]).toContain('<code>events.defaultMaxListeners = Infinity</code>');
    const progress = JSON.parse(readFileSync(process.env.HOTPATH_PROGRESS_FILE!, 'utf8'));
    expect(progress.exercises[EX]).toMatchObject({ hintsShown: 2, passed: false });
    const page = await get(`/exercises/${EX}`);
    expect(page.body.match(/<li class="hp-hint"/g)).toHaveLength(2);
    expect(page.body).toContain('Show hint 3 of 5');
    expect((await get('/')).body).toContain(`data-exercise="${EX}" data-status="hints"`);
    const info = await get(`/api/exercises/${EX}`);
    expect(info.json).toMatchObject({ id: EX, hints: { shown: 2, total: 5 }, demo: ['broken', 1, 2, 3, 'ceiling'] });
    expect(info.json!.servers).toEqual([
      { server: 'broken', label: 'broken', title: 'as shipped' },
      { server: 1, label: 'stage 1', title: UNREVEALED_STAGE },
      { server: 2, label: 'stage 2', title: UNREVEALED_STAGE },
      { server: 3, label: 'stage 3', title: UNREVEALED_STAGE },
      { server: 'mine', label: 'mine', title: 'your server.ts' },
      { server: 'ceiling', label: 'ceiling', title: 'bare framework, same payload' },
    ]);
  });

  it("the doctor's newest result for the exercise, with its kinds, evidence and next tool; before one, how to get it", async () => {
    expect((await get(`/exercises/${EX}`)).body).toMatch(/<section id="doctor"[^>]*><h2>The doctor<\/h2><p id="doctor-none">No result yet\.<\/p>.*npm run workshop -- doctor 01/s);
    const result = (startedAt: string, kinds: Array<'cost-grows' | 'cpu-bound'>): DoctorResult => ({
      exercise: EX,
      startedAt,
      server: { label: 'mine', file: 'exercises/01-seed-service-slows-down/server.ts' },
      node: 'v20.20.2',
      cores: 2,
      load: { connections: 10, seconds: 6, requestsPerSecond: [5000, 300, 150, 120, 100, 90] },
      findings: kinds.map((kind) => ({ kind, title: `title of ${kind}`, evidence: [`evidence of ${kind}`], next: `next for ${kind}` })),
    });
    writeDoctorResult(result('2026-12-01T10:00:00.000Z', ['cpu-bound']), path.join(dir, 'results'));
    writeDoctorResult(result('2026-12-01T11:00:00.000Z', ['cost-grows', 'cpu-bound']), path.join(dir, 'results'));
    const page = (await get(`/exercises/${EX}`)).body;
    expect(page).toContain('<ol id="doctor-findings" data-kinds="cost-grows cpu-bound">');
    expect(page).toContain('<li data-kind="cost-grows"><strong>title of cost-grows</strong><ul><li>evidence of cost-grows</li></ul><p class="hp-dim">Next: next for cost-grows</p></li>');
    expect(page).toContain('mine (<code>exercises/01-seed-service-slows-down/server.ts</code>), Node v20.20.2');
    // Run from the panel: your server.ts by default, the shipped server or the ceiling; never a stage.
    expect(page).toContain('<button id="doctor-run" type="button">Run the doctor</button>');
    expect(page).toContain(
      '<select id="doctor-choice"><option value="mine" selected>your server.ts</option><option value="broken">the shipped server (broken)</option><option value="ceiling">ceiling (bare framework, same payload)</option></select>',
    );
    expect(page).toContain('<script src="/assets/doctor.js" defer></script>');
    // A cluster's workers, each apart, in one line.
    const workers = { ...result('2026-12-01T12:00:00.000Z', []), figures: { workers: [{ pid: 11, cores: 0.98, utilization: 0.97 }, { pid: 12, cores: 0.51, utilization: 0.4 }] } as DoctorResult['figures'] };
    writeDoctorResult(workers, path.join(dir, 'results'));
    const withWorkers = (await get(`/exercises/${EX}`)).body;
    expect(withWorkers).toContain('<p id="doctor-findings" data-kinds="">No problem found.</p>');
    expect(withWorkers).toContain('<p id="doctor-workers" class="hp-dim">2 workers: loop busy 97%, 0.98 cores · loop busy 40%, 0.51 cores</p>');
  });

  it('the solution view is locked before a pass, and the pages name no stage', async () => {
    const locked = await get(`/exercises/${EX}/solution`);
    expect(locked.status).toBe(403);
    expect(locked.body).toContain('unlocks once your server passes (npm run workshop -- verify 01)');
    const page = await get(`/exercises/${EX}`);
    expect(page.body).toContain('<span class="hp-dim" id="solution-link">solution after a pass</span>');
    expect(page.body).not.toContain('<section id="stretch"');
    const exercise = await loadExercise(EX);
    for (const stage of exercise.manifest.stages) {
      expect(page.body).not.toContain(stage.title);
      expect(JSON.stringify((await get(`/api/exercises/${EX}`)).json)).not.toContain(stage.title);
    }
  });

  it('slides: the deck list, a deck in hub mode, and a 404 for a deck that does not exist', async () => {
    const list = await get('/slides');
    expect(list.status).toBe(200);
    expect(list.body).toContain('data-deck="00-opening"');
    expect(list.body).toContain(`href="/slides/${EX}"`);
    const deck = await get(`/slides/${EX}`);
    expect(deck.status).toBe(200);
    expect(deck.body).toContain('<script src="/assets/live.js"></script>');
    expect(deck.body).toContain('class="hp-slide"');
    expect((await get('/slides/99-nope')).status).toBe(404);
    // A deck under the exercise's former id moved with it.
    const former = await get('/slides/01-etag-listener-leak');
    expect(former.status).toBe(308);
    expect(former.headers.location).toBe(`/slides/${EX}`);
  });

  it('assets: the allowlist with the right types; anything else is a 404', async () => {
    const js = await get('/assets/live.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    for (const name of ['hub.css', 'live.css', 'exercise.js', 'deck.css', 'deck.js', 'highlight.css']) expect((await get(`/assets/${name}`)).status, name).toBe(200);
    expect((await get('/assets/nope.js')).status).toBe(404);
    expect((await get('/assets/server.ts')).status).toBe(404);
  });

  it('HEAD answers like GET without a body', async () => {
    const head = await request('HEAD', '/');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });
});

describe('refusals', () => {
  it('path traversal and odd encodings are 404s', async () => {
    const attempts = [
      '/assets/../server.ts',
      '/assets/../../package.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/assets/%252e%252e%252fpackage.json',
      '/assets/..%252f..%252fpackage.json',
      '/assets/%c0%ae%c0%ae/%c0%ae%c0%ae/package.json',
      '/assets/%e0%80%ae%e0%80%ae/package.json',
      '/assets/..\\..\\package.json',
      '/assets/%5c..%5cpackage.json',
      '/assets/live.js%00.png',
      '/assets/%00',
      '/assets/.hidden',
      '/assets/./live.js',
      '/assets//live.js',
      '//etc/passwd',
      '/exercises/..%2f..%2fpackage.json',
      '/exercises/01/../../package.json',
      '/slides/..%2fREADME',
      '/slides/../README.md',
      '/api/runs/..%2f..',
      '/%2e%2e/package.json',
      '/assets/LIVE.JS',
      '/package.json',
      '/scripts/hub/server.ts',
    ];
    for (const attempt of attempts) {
      const answer = await get(attempt);
      expect(answer.status, attempt).toBe(404);
      expect(answer.body, attempt).not.toContain('"name": "hot-path"');
    }
    // A raw NUL or space in the request line is not HTTP: Node's parser refuses it before any route.
    expect(await raw(`GET /assets/live.js\0 HTTP/1.1\r\nHost: 127.0.0.1:${hub.port}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
    // The hub is still up.
    expect((await get('/')).status).toBe(200);
  });

  it('another Host (DNS rebinding) or another Origin is refused', async () => {
    const rebinding = await get('/', { host: 'evil.example:80' });
    expect(rebinding.status).toBe(421);
    expect(rebinding.json?.error).toMatch(/answers at http:\/\/127\.0\.0\.1:\d+ only/);
    const crossSite = await post('/api/runs', { exercise: '01', servers: ['broken'] }, { origin: 'http://evil.example' });
    expect(crossSite.status).toBe(403);
  });

  it('wrong method: 405 with Allow', async () => {
    const del = await request('DELETE', '/');
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
    const getHints = await get(`/api/exercises/${EX}/hints`);
    expect(getHints.status).toBe(405);
    expect(getHints.json?.error).toMatch(/GET is not allowed .* use POST/);
    expect((await post('/', {})).status).toBe(405);
  });

  it('bad run requests: a clear 4xx with { error }, and nothing starts', async () => {
    const cases: Array<[string, unknown, number, RegExp, Record<string, string>?]> = [
      ['bad JSON', '{"exercise": "01", servers: [', 400, /not valid JSON/],
      ['not an object', '[1, 2]', 400, /must be a JSON object/],
      ['no exercise', { servers: ['broken'] }, 400, /"exercise" must name an exercise/],
      ['unknown exercise', { exercise: '42', servers: ['broken'] }, 400, /unknown exercise "42"/],
      ['servers missing', { exercise: '01' }, 400, /"servers" must be a non-empty array/],
      ['servers not an array', { exercise: '01', servers: 'broken' }, 400, /"servers" must be a non-empty array/],
      ['unknown stage', { exercise: '01', servers: [7] }, 400, /unknown server 7 for exercise 01-seed-service-slows-down/],
      ['a path', { exercise: '01', servers: ['../../../etc/passwd'] }, 400, /unknown server "\.\.\/\.\.\/\.\.\/etc\/passwd"/],
      ['a command', { exercise: '01', servers: [{ file: 'rm -rf /' }] }, 400, /unknown server object/],
      ['twice', { exercise: '01', servers: ['broken', 'broken'] }, 400, /listed twice/],
      ['unknown kind', { exercise: '01', kind: 'profile', servers: ['broken'] }, 400, /"kind" must be "bench" .* or "doctor"/],
      ['the doctor on a stage', { exercise: '01', kind: 'doctor', server: 1 }, 400, /the doctor runs here on "mine", "broken", "ceiling", not on 1 \(a stage: npm run workshop -- doctor 01 --stage 1 in a terminal\)/],
      ['the doctor on a path', { exercise: '01', kind: 'doctor', server: '../server.ts' }, 400, /not on "\.\.\/server\.ts"/],
      ['the doctor on no ceiling', { exercise: '09', kind: 'doctor', server: 'ceiling' }, 400, /the doctor runs here on "mine", "broken", not on "ceiling"/],
      ['not JSON', 'exercise=01', 415, /Content-Type: application\/json/, { 'content-type': 'application/x-www-form-urlencoded' }],
      ['too big', JSON.stringify({ exercise: '01', servers: ['broken'], pad: 'x'.repeat(20_000) }), 413, /limit/],
    ];
    for (const [name, body, status, message, headers] of cases) {
      const answer = await post('/api/runs', body, headers);
      expect(answer.status, name).toBe(status);
      expect(answer.json?.error, name).toMatch(message);
    }
    expect((await get('/api/runs')).json).toEqual({ active: null });
    const unknown = '00000000-0000-0000-0000-000000000000';
    expect((await get(`/api/runs/${unknown}/events`)).status).toBe(404);
    expect((await post(`/api/runs/${unknown}/cancel`, {})).status).toBe(404);
    expect((await get('/api/runs/not-a-uuid/events')).status).toBe(404);
  });
});

/** `workshop start ...args` until it prints `until` (then SIGINT) or exits; its output and exit. */
function startCommand(args: string[], until?: RegExp): Promise<{ output: string; code: number | null; readyOutput: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/workshop.ts', 'start', ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let readyOutput = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (until && !readyOutput && until.test(output)) {
        readyOutput = output;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('exit', (code) => resolve({ output, code, readyOutput }));
  });
}

describe('the start command (npm start)', () => {
  it('prints the URL and how long it took; Ctrl-C stops the hub and says so', async () => {
    const port = await freePort();
    const { output, code, readyOutput } = await startCommand(['--port', String(port)], /ready at/);
    expect(readyOutput).toMatch(new RegExp(`Hot Path is ready at http://127\\.0\\.0\\.1:${port} +\\(\\d+\\.\\d s after start\\)`));
    expect(output).toContain(`stopped the hub at http://127.0.0.1:${port}; no live run was in progress.`);
    expect(code).toBe(130);
  });

  it('a busy port: a clear message naming --port, exit code 1; a bad port: a usage error, exit code 2', async () => {
    const busy = await startCommand(['--port', String(hub.port)]);
    expect(busy.code).toBe(1);
    expect(busy.output).toContain(`error: port ${hub.port} on 127.0.0.1 is already in use; choose another with --port PORT, e.g. npm start -- --port 4000`);
    const bad = await startCommand(['--port', 'abc']);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('--port must be a whole number from 1 to 65535, got "abc"');
    for (const value of ['0', '70000', '80.5', '-1', '']) expect(() => hubPortOption(value), value).toThrow(/--port must be a whole number from 1 to 65535/);
    expect(hubPortOption(undefined)).toBe(4000);
    expect(hubPortOption('4100')).toBe(4100);
  });
});

describe('a worker that misbehaves (no load: stand-in workers)', () => {
  const fixture = (name: string) => new URL(`./fixtures/hub/${name}`, import.meta.url);

  it('a worker that ignores cancel is killed after killMs, and the servers it reported go with it', async () => {
    const stuck = await startHub({ port: 0, workerFile: fixture('stuck-worker.ts'), killMs: 500 });
    const saved = hub;
    hub = stuck;
    try {
      const id = (await post('/api/runs', { exercise: '01', servers: ['broken'] })).json!.id as string;
      const first = await events(id, { stop: (e) => e.event === 'starting' }).done;
      expect(first.map((e) => e.event)).toEqual(['run', 'starting']);
      const sleepers = processes('sleep 60', 'stuck-worker.ts');
      expect(sleepers).toHaveLength(1);
      const watching = events(id);
      const asked = Date.now();
      expect((await post(`/api/runs/${id}/cancel`, {})).status).toBe(202);
      expect((await watching.done).at(-1)).toMatchObject({ event: 'cancelled' });
      expect(Date.now() - asked).toBeGreaterThanOrEqual(450);
      // SIGKILL is sent as the run ends; the kernel takes a moment to end the process.
      const until = Date.now() + 1000;
      while (sleepers.some(isAlive) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const pid of sleepers) expect(isAlive(pid), `sleep ${pid}`).toBe(false);
    } finally {
      hub = saved;
      await stuck.close();
    }
  });

  it('a worker that dies without a report ends the run with "failed" and what it printed; the next run may start', async () => {
    const crashing = await startHub({ port: 0, workerFile: fixture('crash-worker.ts') });
    const saved = hub;
    hub = crashing;
    try {
      const id = (await post('/api/runs', { exercise: '01', servers: ['broken'] })).json!.id as string;
      const list = await events(id).done;
      expect(list.at(-1)).toMatchObject({ event: 'failed' });
      expect(list.at(-1)!.data.message).toMatch(/exited \(exit code 3\) before it finished:\nsomething broke in the harness/);
      expect((await get('/api/runs')).json).toEqual({ active: null });
    } finally {
      hub = saved;
      await crashing.close();
    }
  });
});

describe('a pass of your server.ts (stand-in worker)', () => {
  it('is recorded in the progress file, as verify records it, and the report says so', async () => {
    const reporting = await startHub({ port: 0, workerFile: new URL('./fixtures/hub/report-worker.ts', import.meta.url) });
    const saved = hub;
    hub = reporting;
    try {
      const info = await get('/api/exercises/01');
      expect(info.json!.verify).toEqual(['broken', 'mine']);
      const id = (await post('/api/runs', { exercise: '01', servers: info.json!.verify })).json!.id as string;
      const last = (await events(id).done).at(-1)!;
      expect(last.event).toBe('report');
      expect(last.data.recordedPass).toBe(true);
      expect(last.data.overall).toBe('PASS');
      expect(last.data.html).toContain('data-label="mine"');
      const progress = JSON.parse(readFileSync(process.env.HOTPATH_PROGRESS_FILE!, 'utf8'));
      expect(progress.exercises[EX]).toMatchObject({ passed: true, hintsShown: 2 });
      expect((await get('/')).body).toContain(`data-exercise="${EX}" data-status="passed"`);
      expect((await get('/')).body).toContain('<tr class="hp-exercise hp-next" data-exercise="02-worker-heap-climbs"');
      // Passed: the solution view opens, with each stage by name, and the exercise page links to it.
      expect((await get(`/exercises/${EX}`)).body).toContain(`<a id="solution-link" href="/exercises/${EX}/solution">solution</a>`);
      const solution = await get('/exercises/01/solution');
      expect(solution.status).toBe(308);
      const view = await get(`/exercises/${EX}/solution`);
      expect(view.status).toBe(200);
      const exercise = await loadExercise(EX);
      for (const stage of exercise.manifest.stages) expect(view.body).toContain(stage.title.replace(/'/g, '&#39;'));
      expect(view.body).toContain('id="solution"');
      // And the stretch targets, as verify prints them after a pass.
      const passedPage = (await get(`/exercises/${EX}`)).body;
      expect(passedPage).toContain('<section id="stretch"');
      expect(passedPage).toContain('npm run workshop -- verify 01 --stretch');
    } finally {
      hub = saved;
      await reporting.close();
    }
  });
});

describe("the doctor from the hub (exercise 01's ceiling: its 6 s of load)", () => {
  it('runs as a live run, one at a time; streams the load\'s seconds; writes its result as `doctor` does, drawn by the panel', async () => {
    const started = await post('/api/runs', { exercise: '01', kind: 'doctor', server: 'ceiling' });
    expect(started.status).toBe(202);
    const id = started.json!.id as string;
    // Watched at once: the hub cancels a run no page watches for orphanMs (1 s here), and the requests
    // below can take that long on a busy machine (a suite run read 'run', 'cancelling').
    const watching = events(id);
    expect(started.json!.run).toMatchObject({ kind: 'doctor', servers: [{ server: 'ceiling', label: 'ceiling' }], state: 'running' });
    // One run at a time, of either kind.
    const refused = await post('/api/runs', { exercise: '01', servers: ['broken'] });
    expect(refused.status).toBe(409);
    expect(refused.json?.error).toContain(`a run is in progress: exercise ${EX}, the doctor on ceiling (run ${id})`);
    expect((await post('/api/runs', { exercise: '02', kind: 'doctor' })).status).toBe(409);
    expect((await get('/api/runs')).json).toMatchObject({ active: { id, kind: 'doctor', state: 'running' } });

    const list = await watching.done;
    const names = list.map((e) => e.event);
    expect(names.slice(0, 2)).toEqual(['run', 'starting']);
    expect(names.at(-1)).toBe('doctor');
    const { load } = (await loadExercise(EX)).manifest;
    const seconds = list.filter((e) => e.event === 'load').map((e) => `${e.data.progress.phase} ${e.data.progress.second}/${e.data.progress.of}`);
    expect(seconds).toContain(`warm-up 1/${load.warmupSeconds}`);
    expect(seconds).toContain(`measured ${load.durationSeconds}/${load.durationSeconds}`);
    const { result, html, file } = list.at(-1)!.data as { result: DoctorResult; html: string; file: string };
    expect(result).toMatchObject({ exercise: EX, server: { label: 'ceiling', file: `exercises/${EX}/ceiling.ts` }, load: { connections: load.connections, seconds: load.warmupSeconds + load.durationSeconds } });
    expect(result.failure).toBeUndefined();
    expect(result.load.requestsPerSecond.length).toBe(load.warmupSeconds + load.durationSeconds);
    // Written as the CLI writes it, so both show the same newest result.
    expect(path.resolve(ROOT, file)).toMatch(new RegExp(`^${path.join(dir, 'results')}/[^/]+-${EX}-doctor/result\\.json$`));
    expect(JSON.parse(readFileSync(path.resolve(ROOT, file), 'utf8'))).toEqual(result);
    expect(latestDoctorResult(EX, path.join(dir, 'results'))).toEqual(result);
    // The panel the event brings is the page's, drawn by the same code.
    const page = (await get(`/exercises/${EX}`)).body;
    expect(html).toBe(/<section id="doctor"[\s\S]*?<\/section>/.exec(page)![0]);
    expect(html).toContain(`<p id="doctor-server">ceiling (<code>exercises/${EX}/ceiling.ts</code>)`);
    expect(html).toMatch(/id="doctor-findings" data-kinds="[a-z -]*"/);
    expect((await get(`/api/runs/${id}`)).json).toMatchObject({ id, kind: 'doctor', state: 'finished' });
    expect((await get('/api/runs')).json).toEqual({ active: null });
    expect(serversOfRunWorkers()).toEqual([]);
  });
});

describe('live runs (exercise 01, the broken server)', () => {
  let finishedRun = '';

  it('runs through the worker: 202, a second run refused with 409 naming the first, events streamed, the report last', async () => {
    const started = await post('/api/runs', { exercise: '01', servers: ['broken'] });
    expect(started.status).toBe(202);
    const id = started.json!.id as string;
    const watching = events(id); // at once: the hub cancels a run no page watches for orphanMs (see the doctor's test)
    expect(started.headers.location).toBe(`/api/runs/${id}`);
    const refused = await post('/api/runs', { exercise: '01', servers: [1] });
    expect(refused.status).toBe(409);
    expect(refused.json?.error).toContain(`a run is in progress: exercise ${EX}, broken (run ${id})`);
    expect((await get('/api/runs')).json).toMatchObject({ active: { id, state: 'running' } });

    const list = await watching.done;
    const names = list.map((e) => e.event);
    expect(names[0]).toBe('run');
    expect(names.slice(1, 3)).toEqual(['starting', 'checked']);
    expect(names.at(-2)).toBe('done');
    expect(names.at(-1)).toBe('report');
    expect(list.map((e) => Number(e.id))).toEqual(list.map((_, i) => i + 1));
    const loads = list.filter((e) => e.event === 'load').map((e) => e.data.progress);
    // The broken server alone: its turns, one point each.
    const { minRounds } = turnsOf((await loadExercise('01-seed-service-slows-down')).manifest.load);
    expect(loads.filter((p) => p.phase === 'in turns').length).toBeGreaterThanOrEqual(minRounds);
    expect(loads.some((p) => p.latencyLastSecond && p.latencyLastSecond.p99 >= p.latencyLastSecond.p50)).toBe(true);
    const { report, html } = list.at(-1)!.data;
    expect(report.exercise.id).toBe(EX);
    expect(report.servers[0].load.requestsPerSecond.mean).toBeGreaterThan(0);
    expect(html).toContain('<table class="hp-figures">');
    expect((await get(`/api/runs/${id}`)).json).toMatchObject({ id, state: 'finished' });
    expect((await get('/api/runs')).json).toEqual({ active: null });
    finishedRun = id;
  });

  it('replays every event to a late joiner, and only the missed ones after Last-Event-ID', async () => {
    const all = await events(finishedRun).done;
    expect(all.at(-1)!.event).toBe('report');
    const after = await events(finishedRun, { lastEventId: 3 }).done;
    expect(after.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    expect((await post(`/api/runs/${finishedRun}/cancel`, {})).status).toBe(409);
  });

  it('cancels a run nobody watches any more, and leaves no server process behind', async () => {
    const started = await post('/api/runs', { exercise: '01', servers: ['broken'] });
    const id = started.json!.id as string;
    const watching = events(id, { stop: (e) => e.event === 'load' });
    await watching.done;
    const servers = serversOfRunWorkers();
    expect(servers.length).toBe(1);
    // The page went away (stop closed the stream); after orphanMs (1 s here) the run is cancelled.
    const wentAway = Date.now();
    let state = 'running';
    while (state === 'running' && Date.now() - wentAway < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await get(`/api/runs/${id}`)).json!.state as string;
    }
    expect(state).toBe('cancelled');
    expect(Date.now() - wentAway).toBeGreaterThanOrEqual(900);
    const rest = await events(id).done; // the replay, ending with the cancellation
    expect(rest.at(-1)).toMatchObject({ event: 'cancelled', data: { reason: 'no page watched it for 1 s' } });
    expect(rest.map((e) => e.event)).toContain('cancelling');
    for (const pid of servers) expect(isAlive(pid), `server ${pid}`).toBe(false);
    expect(serversOfRunWorkers()).toEqual([]);
  });

  it('cancel from a page; then close() ends a run in progress and its server', async () => {
    const first = await post('/api/runs', { exercise: '01', servers: ['broken'] });
    const id = first.json!.id as string;
    const watching = events(id);
    const cancel = await post(`/api/runs/${id}/cancel`, {});
    expect(cancel.status).toBe(202);
    expect((await watching.done).at(-1)).toMatchObject({ event: 'cancelled', data: { reason: 'cancelled from a page' } });

    const second = await post('/api/runs', { exercise: '01', servers: ['broken'] });
    const secondId = second.json!.id as string;
    const stream = events(secondId);
    await events(secondId, { stop: (e) => e.event === 'checked' }).done;
    const servers = serversOfRunWorkers();
    expect(servers.length).toBe(1);
    await hub.close();
    expect((await stream.done).at(-1)).toMatchObject({ event: 'cancelled', data: { reason: 'the hub is stopping' } });
    for (const pid of servers) expect(isAlive(pid)).toBe(false);
    expect(serversOfRunWorkers()).toEqual([]);
  });
});
