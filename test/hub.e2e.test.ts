// The hub end to end in Debian's Chromium (playwright-core): home, a deck with its presenter view, a live
// demo of exercise 05 run from its slide, one run at a time, refused traversals, a closed page ending
// its run and its servers, and the doctor run from an exercise page. The hub runs in this process on port 0 with a temporary progress file.
// The demo puts load on the machine: run this file on its own, under the load lock:
//   flock /tmp/hotpath-load.lock npx vitest run test/hub.e2e.test.ts
// HOTPATH_E2E_SCREENSHOTS=<folder> also saves a screenshot of the verdict on the slide and of the presenter view.
import http from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exerciseFolders } from '../scripts/exercises.ts';
import { startHub, type Hub } from '../scripts/hub/server.ts';
import { KINDS } from '../scripts/doctor/kinds.ts';
import type { DoctorResult } from '../scripts/doctor/result.ts';
import { writeDoctorResult } from '../scripts/results.ts';
import { loadDeck } from '../scripts/hub/slides.ts';
import { ROOT } from '../scripts/paths.ts';
import { liveServerPids } from '../scripts/server-process.ts';
import { browserMissing, launchChromium } from './browser.ts';
import { isAlive } from './helpers.ts';

const EX = '01-seed-service-slows-down';
const EX_TITLE = 'The seed service that slows down';
const OTHER_EX = '02-worker-heap-climbs';
const DECK = loadDeck(EX)!;
const COUNT = DECK.slides.length;
/** The live demo: an exercise of two servers, the shortest run a deck has (01's four take twice as long). */
const DEMO_EX = '05-waiting-worker-busy-cpu';
const DEMO_DECK = loadDeck(DEMO_EX)!;
const DEMO_COUNT = DEMO_DECK.slides.length;
const DEMO_SLIDE = DEMO_DECK.slides.findIndex((s) => s.html.includes(`class="hp-demo" data-exercise="${DEMO_EX}"`)) + 1;
const SHOTS = process.env.HOTPATH_E2E_SCREENSHOTS;
/** The real progress file, which the tests must never touch. */
const REAL_PROGRESS = path.join(ROOT, '.hotpath-progress.json');
/** Lines of package.json that no page of the hub contains: a body with one of them leaked the file. */
const PACKAGE_MARKERS = ['"allowScripts"', '"devDependencies"', `"vitest": "${JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies.vitest}"`];
/** A line of README.md that is not on any page of the hub. */
const README_MARKER = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
  .split('\n')
  .find((l) => l.startsWith('A hands-on Node.js performance workshop'))!;

/** Plain text of an HTML fragment, whitespace collapsed. */
function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, n: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[n]!)
    .replace(/\s+/g, ' ')
    .trim();
}
const headingOf = (n: number) => text(/<h[12][^>]*>([\s\S]*?)<\/h[12]>/.exec(DECK.slides[n - 1]!.html)![1]!);
/** The first words of a slide's notes: enough to find them on a page. */
const notesOf = (n: number) => text(DECK.slides[n - 1]!.notes).split(' ').slice(0, 6).join(' ');

// ---- Processes, from /proc: the hub's run worker is a child of this process, the servers its children.

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
}

function processes(): Proc[] {
  const list: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if (isAlive(Number(name))) list.push({ pid: Number(name), ppid, cmd });
    } catch {
      // It exited while we looked.
    }
  }
  return list;
}

function descendants(root: number, all = processes()): Proc[] {
  const found: Proc[] = [];
  let parents = new Set([root]);
  while (parents.size > 0) {
    const children = all.filter((p) => parents.has(p.ppid));
    found.push(...children);
    parents = new Set(children.map((p) => p.pid));
  }
  return found;
}

/** What a live run has running now: its worker and everything under it (the servers and their helpers). */
function runProcesses(): { worker?: Proc; under: Proc[] } {
  const all = processes();
  const worker = descendants(process.pid, all).find((p) => p.cmd.includes('run-worker.ts'));
  return { worker, under: worker ? descendants(worker.pid, all) : [] };
}

/** Processes under this one that belong to a run or to an exercise: none may be left at the end. */
function leftovers(): Proc[] {
  return descendants(process.pid).filter((p) => /run-worker\.ts|exercises\/|solutions\//.test(p.cmd));
}

// ---- Requests sent exactly as written (a browser or fetch would normalise `..` and `\` away).

interface Answer {
  status: number;
  body: string;
}

function rawGet(hub: Hub, rawPath: string, accept = 'text/html'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: hub.port, path: rawPath, headers: { accept } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
}

async function api<T = any>(hub: Hub, apiPath: string): Promise<T> {
  const res = await fetch(hub.url + apiPath);
  expect(res.status, `GET ${apiPath}`).toBe(200);
  return (await res.json()) as T;
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name) });
}

describe.skipIf(Boolean(browserMissing))(`the hub in Chromium${browserMissing ? ` (skipped: ${browserMissing})` : ''}`, () => {
  let hub: Hub;
  let browser: Browser;
  let context: BrowserContext;
  let dir: string;
  const savedProgress = process.env.HOTPATH_PROGRESS_FILE;
  const realProgressBefore = existsSync(REAL_PROGRESS) ? statSync(REAL_PROGRESS).mtimeMs : undefined;
  /** Uncaught exceptions and console errors of every page, by page URL. */
  let pageErrors: string[] = [];

  /** A page whose script errors are collected; a failed resource load (a 404 asked for) is not one. */
  async function newPage(): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) pageErrors.push(`${page.url()}: ${message.text()}`);
    });
    return page;
  }

  function expectNoPageErrors(): void {
    const errors = pageErrors;
    pageErrors = [];
    expect(errors, 'errors in the pages').toEqual([]);
  }

  beforeAll(async () => {
    expect(DEMO_SLIDE, `a ::: demo 05 slide in slides/${DEMO_EX}.md`).toBeGreaterThan(1);
    dir = mkdtempSync(path.join(tmpdir(), 'hotpath-e2e-'));
    // An empty progress file of our own: 01 is the next exercise, and the real file stays as it is.
    process.env.HOTPATH_PROGRESS_FILE = path.join(dir, 'progress.json');
    // A page closed mid-run cancels it after orphanMs; 2 s keeps test 6 well inside one server's run.
    hub = await startHub({ port: 0, orphanMs: 2000, resultsDir: path.join(dir, 'results') });
    // A doctor's result for 01, as `doctor 01` writes it: the exercise page shows it.
    writeDoctorResult(
      {
        exercise: EX,
        startedAt: new Date().toISOString(),
        server: { label: 'mine', file: `exercises/${EX}/server.ts` },
        node: process.version,
        cores: 2,
        load: { connections: 10, seconds: 6, requestsPerSecond: [5000, 300, 150, 120, 100, 90] },
        findings: [{ kind: 'cost-grows', title: 'The cost of a request grows as the server runs, at a constant load', evidence: ['req/s fell'], next: 'profile it' }],
      },
      path.join(dir, 'results'),
    );
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  });

  afterAll(async () => {
    try {
      // Nothing running once the tests are done: no run in the hub, no worker, no exercise server.
      if (hub) expect((await api(hub, '/api/runs')).active).toBeNull();
      expect(leftovers()).toEqual([]);
      expect(liveServerPids()).toEqual([]);
    } finally {
      await context?.close();
      await browser?.close();
      await hub?.close();
      if (savedProgress === undefined) delete process.env.HOTPATH_PROGRESS_FILE;
      else process.env.HOTPATH_PROGRESS_FILE = savedProgress;
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
    expect(hub?.activeRun()).toBeUndefined();
    expect(descendants(process.pid).filter((p) => /chrom/i.test(p.cmd))).toEqual([]);
    expect(existsSync(REAL_PROGRESS) ? statSync(REAL_PROGRESS).mtimeMs : undefined, 'the real .hotpath-progress.json').toBe(realProgressBefore);
  });

  it('1. home lists every exercise, highlights the next one, and its links open the exercise page and the deck', async () => {
    const page = await newPage();
    try {
      const response = await page.goto(`${hub.url}/`);
      expect(response?.status()).toBe(200);
      const rows = page.locator('#exercises tbody tr');
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-exercise')))).toEqual(exerciseFolders());
      expect(await page.locator('#exercises tbody td.hp-num').allTextContents()).toEqual(exerciseFolders().map((id) => id.slice(0, 2)));
      // Empty progress: nothing passed, and 01 is next, marked so the eye sees it.
      expect(new Set(await page.locator('#exercises tbody td.hp-status').allTextContents())).toEqual(new Set(['not yet']));
      expect(await page.locator('#progress-summary').textContent()).toBe(`0 of ${exerciseFolders().length} passed`);
      const next = page.locator('#exercises tr.hp-next');
      expect(await next.count()).toBe(1);
      expect(await next.getAttribute('data-exercise')).toBe(EX);
      expect(await next.locator('.hp-next-badge').isVisible()).toBe(true);
      expect(await next.evaluate((tr) => getComputedStyle(tr).outlineStyle)).toBe('solid');
      expect(await rows.nth(1).evaluate((tr) => getComputedStyle(tr).outlineStyle)).toBe('none');
      expect(await page.locator('#next-link').textContent()).toContain(EX_TITLE);

      await next.locator('a.hp-exercise-link').click();
      await page.waitForURL(`${hub.url}/exercises/${EX}`);
      expect(await page.locator('#brief h1').first().textContent()).toMatch(/seed service that slows down/i);
      expect(await page.locator('#hints-status').textContent()).toMatch(/None seen yet/);
      // The doctor's newest result, with the kind it named.
      expect(await page.locator('#doctor li[data-kind="cost-grows"] strong').isVisible()).toBe(true);
      expect(await page.locator('#doctor li[data-kind="cost-grows"] strong').textContent()).toMatch(/cost of a request grows/);

      await page.goBack();
      await page.locator(`#exercises tr[data-exercise="${EX}"] a.hp-deck-link`).click();
      await page.waitForURL((url) => url.origin === hub.url && url.pathname === `/slides/${EX}`); // the deck may add #1 before load
      await expect.poll(() => page.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`1 / ${COUNT}`);
      expect(await page.locator('section.hp-slide.hp-current h1').textContent()).toBe(headingOf(1));
      expectNoPageErrors();
    } finally {
      await page.close();
    }
  });

  it('2. a deck steps with the keys, opens on a deep link, hides the notes, and the presenter view drives the audience', async () => {
    /** What the audience sees: the counter, the hash, the one visible slide and its heading, the page's text. */
    const seen = (page: Page) =>
      page.evaluate(() => {
        const visible = Array.from(document.querySelectorAll('section.hp-slide')).filter((s) => s.checkVisibility());
        return {
          counter: document.getElementById('hp-counter')!.textContent,
          hash: location.hash,
          visible: visible.map((s) => Number(s.getAttribute('data-slide'))),
          current: Array.from(document.querySelectorAll('section.hp-slide.hp-current')).map((s) => Number(s.getAttribute('data-slide'))),
          heading: visible[0]?.querySelector('h1, h2')?.textContent?.trim(),
          text: document.body.innerText,
        };
      });
    const expectSlide = async (page: Page, n: number) => {
      await expect.poll(() => page.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`${n} / ${COUNT}`);
      const now = await seen(page);
      expect({ counter: now.counter, hash: now.hash, visible: now.visible, current: now.current, heading: now.heading }, `slide ${n}`).toEqual({
        counter: `${n} / ${COUNT}`,
        hash: `#${n}`,
        visible: [n],
        current: [n],
        heading: headingOf(n),
      });
      // Speaker notes stay out of the audience's view.
      if (DECK.slides[n - 1]!.notes) expect(now.text).not.toContain(notesOf(n));
      expect(await page.locator('#hp-notes-view').count()).toBe(0);
    };

    const page = await newPage();
    const deepLink = await newPage();
    const presenter = await newPage();
    try {
      // From the exercise page, as a trainee would.
      await page.goto(`${hub.url}/exercises/${EX}`);
      await page.locator('#deck-link').click();
      await page.waitForURL((url) => url.origin === hub.url && url.pathname === `/slides/${EX}`); // the deck may add #1 before load
      await expectSlide(page, 1); // the deck puts #1 in the address at once
      await page.keyboard.press('ArrowRight');
      await expectSlide(page, 2);
      await page.keyboard.press('Space');
      await expectSlide(page, 3);
      await page.keyboard.press('ArrowLeft');
      await expectSlide(page, 2);
      await page.keyboard.press('End');
      await expectSlide(page, COUNT);
      await page.keyboard.press('ArrowRight'); // past the end: stays
      await expectSlide(page, COUNT);
      await page.keyboard.press('Home');
      await expectSlide(page, 1);
      await page.goBack(); // history: back to the last slide
      await expectSlide(page, COUNT);
      await page.close();

      await deepLink.goto(`${hub.url}/slides/${EX}#4`);
      await expectSlide(deepLink, 4);

      // The presenter window asks where the audience is, then leads it.
      await presenter.goto(`${hub.url}/slides/${EX}?presenter`);
      await expect.poll(() => presenter.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`4 / ${COUNT}`);
      await presenter.keyboard.press('ArrowRight');
      await expect.poll(() => presenter.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`5 / ${COUNT}`);
      await expect.poll(() => deepLink.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`5 / ${COUNT}`);
      await expectSlide(deepLink, 5);
      const notesView = presenter.locator('#hp-notes-view');
      expect(await notesView.isVisible()).toBe(true);
      expect(text((await notesView.innerHTML()) ?? '')).toContain(notesOf(5));
      const nextSlide = presenter.locator('#hp-next-slide');
      expect(await nextSlide.isVisible()).toBe(true);
      expect(await nextSlide.locator('h1, h2').first().textContent()).toBe(headingOf(6));
      await screenshot(presenter, 'presenter.png');

      // And back the other way: the audience window moves the presenter.
      await deepLink.keyboard.press('ArrowLeft');
      await expect.poll(() => presenter.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`4 / ${COUNT}`);
      expect(text(await notesView.innerHTML())).toContain(notesOf(4));
      expectNoPageErrors();
    } finally {
      await Promise.all([page, deepLink, presenter].map((p) => p.close()));
    }
  });

  describe('3-4. the live demo of exercise 05 from its slide', () => {
    let page: Page;
    let presenter: Page;
    let demo: ReturnType<Page['locator']>;
    let presenterDemo: ReturnType<Page['locator']>;
    let runId: string;

    afterAll(async () => {
      await page?.close();
      await presenter?.close();
    });

    it('3a. "Run the demo" starts the run and the chart draws while it runs', async () => {
      page = await newPage();
      await page.goto(`${hub.url}/slides/${DEMO_EX}`);
      for (let n = 1; n < DEMO_SLIDE; n++) await page.keyboard.press('ArrowRight');
      await expect.poll(() => page.locator('#hp-counter').textContent(), { timeout: 5000 }).toBe(`${DEMO_SLIDE} / ${DEMO_COUNT}`);
      demo = page.locator(`section.hp-slide.hp-current .hp-demo[data-exercise="${DEMO_EX}"]`);
      const button = demo.locator('button.hp-run[data-servers="all"]');
      await button.waitFor({ state: 'visible', timeout: 10_000 });
      expect(await button.textContent()).toContain('Run the demo');
      await expect.poll(() => button.isEnabled(), { timeout: 5000 }).toBe(true);
      // The terminal command is the fallback: hidden once the live widget is there.
      expect(await demo.locator('.hp-demo-fallback').isVisible()).toBe(false);
      // The instructor's presenter window, on the same slide: it must show the run too.
      presenter = await newPage();
      await presenter.goto(`${hub.url}/slides/${DEMO_EX}?presenter#${DEMO_SLIDE}`);
      presenterDemo = presenter.locator(`section.hp-slide.hp-current .hp-demo[data-exercise="${DEMO_EX}"]`);
      await expect.poll(() => presenterDemo.locator('button.hp-run[data-servers="all"]').isEnabled(), { timeout: 10_000 }).toBe(true);
      await button.click();

      await expect.poll(() => demo.getAttribute('data-state'), { timeout: 10_000 }).toBe('running');
      runId = (await demo.getAttribute('data-run-id'))!;
      expect(runId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await button.isDisabled()).toBe(true);
      // The legend comes with the run's first event, which may arrive after the state changed.
      const legend = () => demo.locator('.hp-legend-item').evaluateAll((items) => items.map((i) => i.getAttribute('data-label')));
      await expect.poll(legend, { timeout: 10_000 }).toEqual(['broken', 'stage 1']);

      // A req/s line with a few seconds in it, drawn while the run is still going.
      const drawn = await page.waitForFunction(
        () => {
          const root = document.querySelector('section.hp-slide.hp-current .hp-demo')!;
          const line = root.querySelector('.hp-chart-rps path.hp-chart-line');
          const points = (line?.getAttribute('d') ?? '').split(/[ML]/).filter((p) => p.trim()).length;
          return points >= 3 ? { state: root.getAttribute('data-state'), points, status: root.querySelector('.hp-live-status')?.textContent } : false;
        },
        undefined,
        { timeout: 60_000, polling: 200 },
      );
      const at = (await drawn.jsonValue()) as { state: string; points: number; status: string };
      expect(at.state).toBe('running');
      expect(at.status).toMatch(/(warm-up|in turns) \d+\/\d+ s/);
      expect(await demo.locator('.hp-chart-latency path.hp-chart-line').count()).toBeGreaterThan(0);
      expect(await demo.locator('.hp-live-chart').isVisible()).toBe(true);
      expect((await api(hub, '/api/runs')).active?.id).toBe(runId);
      // Started in the audience window, followed in the presenter's.
      expect(await presenterDemo.getAttribute('data-run-id')).toBe(runId);
      expect(await presenterDemo.getAttribute('data-state')).toBe('running');
    });

    it('4. a second run is refused with 409 naming the run in progress', async () => {
      expect(runId, 'the demo of 3a is running').toBeTruthy();
      const second = await page.evaluate(async (exercise) => {
        const res = await fetch('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ exercise, servers: ['broken'] }) });
        return { status: res.status, body: (await res.json()) as { error: string; running?: { id: string } } };
      }, DEMO_EX);
      expect(second.status).toBe(409);
      expect(second.body.error).toContain('a run is in progress');
      expect(second.body.error).toContain(DEMO_EX);
      expect(second.body.error).toContain(runId);
      expect(second.body.running?.id).toBe(runId);

      // What a trainee sees who clicks a run on another exercise's page meanwhile.
      const other = await newPage();
      try {
        await other.goto(`${hub.url}/exercises/${OTHER_EX}`);
        const button = other.locator('#live button.hp-run[data-servers="broken"]');
        await expect.poll(() => button.isEnabled(), { timeout: 10_000 }).toBe(true);
        await button.click();
        const error = other.locator('#live .hp-live-error');
        await error.waitFor({ state: 'visible', timeout: 10_000 });
        expect(await error.textContent()).toContain(`a run is in progress: exercise ${DEMO_EX}`);
        expect(await other.locator('#live').getAttribute('data-state')).toBe('idle');
      } finally {
        await other.close();
      }
      expect((await api(hub, '/api/runs')).active?.id).toBe(runId);
      expectNoPageErrors();
    });

    it('3b. the verdict appears on the slide: every server measured, a verdict for each stage', async () => {
      expect(runId, 'the demo of 3a is running').toBeTruthy();
      const report = demo.locator('.hp-report[data-pass]');
      await report.waitFor({ state: 'visible', timeout: 120_000 });
      expect(await demo.getAttribute('data-state')).toBe('done');
      // Beside the other loaded tests a target may be too close to call: any verdict, said the same in both places.
      const overall = await report.locator('.hp-overall').textContent();
      expect(overall).toMatch(/^(PASS|FAIL|TOO CLOSE TO CALL)/);
      const word = overall!.match(/^(PASS|FAIL|TOO CLOSE TO CALL)/)![1];
      expect(await demo.locator('.hp-live-status').textContent()).toMatch(new RegExp(`^Finished: ${word}\\.`));
      expect(await demo.locator('.hp-live-error').isVisible()).toBe(false);
      // On a slide the verdict replaces the chart; the tabs switch between them.
      expect(await demo.locator('.hp-tab[data-tab="report"]').getAttribute('aria-pressed')).toBe('true');
      expect(await demo.locator('.hp-live-chart').isVisible()).toBe(false);

      const rows = await report.locator('table.hp-figures tbody tr').evaluateAll((trs) =>
        trs.map((tr) => {
          const cells = (tr as HTMLTableRowElement).cells;
          const kept = (cells[10]?.textContent ?? '').split('/');
          return {
            label: tr.getAttribute('data-label'),
            rps: Number(cells[2]?.textContent?.replace(/,/g, '')),
            problems: cells[9]?.textContent,
            keptContract: kept.length === 2 && kept[0] === kept[1] && kept[0] !== '0',
            betweenTurns: /^\d+\.\d\d$/.test(cells[11]?.textContent ?? ''),
            othersInTurns: /^\d+\.\d\d$/.test(cells[12]?.textContent ?? ''),
            status: cells[13]?.textContent,
          };
        }),
      );
      expect(rows.map((r) => r.label)).toEqual(['broken', 'stage 1']);
      for (const row of rows) {
        // Loaded, no errors, timeouts or non-2xx answers, every sampled answer kept the contract, its cores between
        // turns and other programs' cores in its turns shown, correct answers (no status word).
        expect(row, row.label!).toEqual({ label: row.label, rps: expect.any(Number), problems: '0/0/0', keptContract: true, betweenTurns: true, othersInTurns: true, status: '' });
        expect(row.rps, `${row.label} req/s`).toBeGreaterThan(0);
      }
      expect(await report.locator('.hp-server-problems').count()).toBe(0);

      // A verdict for each stage, each target with a measured ratio; PASS or FAIL is the author check's business.
      for (const label of ['stage 1']) {
        const card = report.locator(`.hp-verdict-card[data-label="${label}"]`);
        expect(await card.count(), label).toBe(1);
        expect(await card.isVisible()).toBe(true);
        expect(await card.locator('h4 .hp-badge').textContent()).toMatch(/^(pass|fail|too close to call)$/);
        const measured = await card.locator('table.hp-targets tbody tr td:nth-child(2)').allTextContents();
        expect(measured.length, `${label} targets`).toBeGreaterThan(0);
        for (const value of measured) expect(value, `${label} measured ratio`).toMatch(/\d/);
      }
      await screenshot(page, 'verdict-slide.png');
      await presenterDemo.locator('.hp-report[data-pass]').waitFor({ state: 'visible', timeout: 10_000 });
      expect(await presenterDemo.getAttribute('data-state')).toBe('done');

      const summary = await api(hub, `/api/runs/${runId}`);
      expect(summary.state).toBe('finished');
      expect((await api(hub, '/api/runs')).active).toBeNull();
      expect(runProcesses().worker).toBeUndefined();
      expectNoPageErrors();
    });
  });

  it('5. traversal and odd encodings get 404 and never the file; an unknown exercise gets a clear 4xx', async () => {
    const attempts = [
      '/assets/../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/%2E%2E/package.json',
      '/assets/.%2e/package.json',
      '/assets/%252e%252e/package.json',
      '/assets/%252e%252e%252fpackage.json',
      '/assets/%c0%ae%c0%ae/package.json',
      '/slides/..%2fREADME',
      '/slides/../README',
      '/exercises/..%2f..%2fpackage.json',
      '/exercises/../../package.json',
      '/assets/deck.js%00.png',
      '/assets/deck.js%00',
      '/assets/..\\..\\package.json',
      '/assets/..%5c..%5cpackage.json',
      '/assets/%5c..%5cpackage.json',
      '/slides/..\\README',
      '/assets//package.json',
      '/package.json',
      '/README.md',
      '/assets/.env',
    ];
    for (const attempt of attempts) {
      const answer = await rawGet(hub, attempt);
      expect(answer.status, attempt).toBe(404);
      for (const marker of [...PACKAGE_MARKERS, README_MARKER]) expect(answer.body, attempt).not.toContain(marker);
    }

    // Through the browser too: what it sends after its own normalising, and what the user sees.
    const page = await newPage();
    try {
      for (const attempt of ['/assets/../package.json', '/assets/..%2f..%2fpackage.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/deck.js%00.png', '/assets/..\\..\\package.json', '/slides/..%2fREADME']) {
        const response = await page.goto(hub.url + attempt);
        expect(response?.status(), attempt).toBe(404);
        const body = await page.content();
        for (const marker of [...PACKAGE_MARKERS, README_MARKER]) expect(body, attempt).not.toContain(marker);
        expect(await page.locator('h1').textContent(), attempt).toBe('404');
      }

      const unknown = await page.goto(`${hub.url}/exercises/99`);
      expect(unknown?.status()).toBe(404);
      const message = await page.locator('.hp-error-message').textContent();
      expect(message).toContain('unknown exercise "99"');
      expect(message).toContain(EX); // it lists the exercises there are
      const fromApi = await page.evaluate(async () => {
        const res = await fetch('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ exercise: '99', servers: ['broken'] }) });
        return { status: res.status, body: (await res.json()) as { error: string } };
      });
      expect(fromApi.status).toBe(400);
      expect(fromApi.body.error).toContain('unknown exercise "99"');
      const jsonAnswer = await rawGet(hub, '/api/exercises/99', 'application/json');
      expect(jsonAnswer.status).toBe(404);
      expect(JSON.parse(jsonAnswer.body).error).toContain('unknown exercise "99"');

      // The hub is still there, and still serves its pages and its real assets.
      const home = await page.goto(`${hub.url}/`);
      expect(home?.status()).toBe(200);
      expect(await page.locator('#exercises tbody tr').count()).toBe(exerciseFolders().length);
      expect((await rawGet(hub, '/assets/deck.js', '*/*')).status).toBe(200);
      expect((await api(hub, '/api/runs')).active).toBeNull();
      expectNoPageErrors();
    } finally {
      await page.close();
    }
  });

  it('6. closing the page during a run cancels it and ends its servers', async () => {
    const page = await newPage();
    let closed = false;
    try {
      await page.goto(`${hub.url}/exercises/${EX}`);
      const live = page.locator('#live');
      const button = live.locator('button.hp-run[data-servers="broken"]');
      await expect.poll(() => button.isEnabled(), { timeout: 10_000 }).toBe(true);
      await button.click();
      // Under load: the server is up and the page shows its seconds.
      await expect.poll(() => live.locator('.hp-live-status').textContent(), { timeout: 30_000, interval: 100 }).toMatch(/^broken: (warm-up|measured|in turns) \d+\/\d+ s/);
      const runId = (await live.getAttribute('data-run-id'))!;
      expect((await api(hub, '/api/runs')).active?.id).toBe(runId);
      const running = runProcesses();
      expect(running.worker, 'the run worker').toBeDefined();
      const servers = running.under.filter((p) => p.cmd.includes(`solutions/${EX}/`));
      expect(servers.length, `a server of ${EX} under the worker: ${JSON.stringify(running.under)}`).toBeGreaterThan(0);
      const pids = [running.worker!.pid, ...running.under.map((p) => p.pid)];

      const closedAt = Date.now();
      await page.close();
      closed = true;
      await expect.poll(async () => (await api(hub, '/api/runs')).active, { timeout: 15_000, interval: 200 }).toBeNull();
      expect((await api(hub, `/api/runs/${runId}`)).state).toBe('cancelled');
      await expect.poll(() => pids.filter(isAlive), { timeout: Math.max(1000, 15_000 - (Date.now() - closedAt)), interval: 200 }).toEqual([]);
      expect(Date.now() - closedAt).toBeLessThan(15_000);
      expect(leftovers()).toEqual([]);
      expectNoPageErrors();
    } finally {
      if (!closed) await page.close();
    }
  });

  it('7. "Run the doctor" on the shipped server: the load\'s seconds, then the panel shows the new result in place', async () => {
    const page = await newPage();
    try {
      await page.goto(`${hub.url}/exercises/${EX}`);
      const panel = page.locator('#doctor');
      // The result written before (beforeAll), with its evidence.
      expect(await panel.locator('li[data-kind="cost-grows"] li').first().textContent()).toBe('req/s fell');
      const button = panel.locator('#doctor-run');
      await expect.poll(() => button.isVisible(), { timeout: 10_000 }).toBe(true);
      const choice = panel.locator('#doctor-choice');
      expect(await choice.inputValue()).toBe('mine');
      expect(await choice.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).toEqual(['mine', 'broken', 'ceiling']);
      // Without a reload: a mark on the window survives, a new page would not have it.
      await page.evaluate(() => ((window as unknown as { hpMark: number }).hpMark = 1));
      await choice.selectOption('broken');
      await button.click();

      // The load's seconds while it runs; the button waits for the end.
      await expect.poll(() => page.locator('#doctor-status').textContent(), { timeout: 30_000, interval: 100 }).toMatch(/^The doctor on broken: (warm-up|measured) \d+\/\d+ s · [\d,]+ req\/s$/);
      expect(await panel.getAttribute('data-state')).toBe('running');
      expect(await button.isDisabled()).toBe(true);
      const runId = (await panel.getAttribute('data-run-id'))!;
      expect((await api(hub, '/api/runs')).active).toMatchObject({ id: runId, kind: 'doctor', servers: [{ server: 'broken' }] });

      await page.locator('#doctor[data-state="done"]').waitFor({ timeout: 60_000 });
      expect(await page.evaluate(() => (window as unknown as { hpMark?: number }).hpMark)).toBe(1);
      expect(await page.locator('#doctor-status').textContent()).toMatch(/^Done: the result is kept as .*-doctor\/result\.json\.$/);
      expect(await page.locator('#doctor-error').isVisible()).toBe(false);
      expect(await page.locator('#doctor-failure').count()).toBe(0);
      expect(await page.locator('#doctor-server').textContent()).toContain(`broken (solutions/${EX}/`);
      // The kinds a real run named (01's shipped server shows at least one), each with its evidence and the tool to use next.
      const kinds = ((await page.locator('#doctor-findings').getAttribute('data-kinds')) ?? '').split(' ').filter(Boolean);
      expect(kinds.length).toBeGreaterThan(0);
      for (const kind of kinds) expect(KINDS as readonly string[]).toContain(kind);
      const items = page.locator('#doctor-findings > li');
      expect(await items.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-kind')))).toEqual(kinds);
      for (const item of await items.all()) {
        expect(await item.locator('ul > li').count()).toBeGreaterThan(0);
        expect(await item.locator('p').textContent()).toMatch(/^Next: /);
      }
      // The evidence written before (beforeAll) is gone: the panel is the new result's.
      expect(await panel.locator('li[data-kind] li').allTextContents()).not.toContain('req/s fell');
      await screenshot(page, 'doctor.png');
      // Kept where `doctor` keeps it: the newest result, the one shown.
      const results = path.join(dir, 'results');
      const newest = readdirSync(results).filter((name) => name.endsWith(`-${EX}-doctor`)).sort().at(-1)!;
      const written = JSON.parse(readFileSync(path.join(results, newest, 'result.json'), 'utf8')) as DoctorResult;
      expect(written.server.label).toBe('broken');
      expect(written.findings.map((f) => f.kind)).toEqual(kinds);
      // Ready for another run.
      expect(await page.locator('#doctor-run').isEnabled()).toBe(true);
      expect((await api(hub, `/api/runs/${runId}`)).state).toBe('finished');
      expect(runProcesses().worker).toBeUndefined();
      expectNoPageErrors();
    } finally {
      await page.close();
    }
  });
});
