import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Expectations, fetchResponse, timedGet, type CheckResult, type FetchedResponse } from '../../scripts/check.ts';
import { defineExercise, type AnswerContract, type AnswerSample, type CheckContext } from '../../scripts/manifest.ts';
import { routeTableService, type RouteTableContext } from '../../scripts/services/route-table.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { throughputKept } from '../../scripts/metrics/throughput-kept.ts';
import { CATALOGUE, DEFAULT_ROUTES_FILE, PUBLIC_DIR, pageView, readRouteTable, rowView, type RouteEntry } from './site.ts';

/** How long a change to the route table may take to be served: the server re-reads it every 50 ms. */
const CHANGE_WAIT_MS = 2000;
/** Reloads the probe waits for before it checks anything, so it checks a server that has reloaded. */
const RELOADS_FIRST = 5;

/** The static files the site's pages load, with the content type each must be served with. */
const STATIC_FILES = [
  { url: '/', file: 'index.html', type: 'text/html' },
  { url: '/app.js', file: 'app.js', type: 'javascript' },
  { url: '/styles.css', file: 'styles.css', type: 'text/css' },
  { url: '/img/logo.svg', file: 'img/logo.svg', type: 'image/svg+xml' },
  { url: '/robots.txt', file: 'robots.txt', type: 'text/plain' },
];

interface RouteStatus {
  reloads: number;
  revision: number;
  layers: number;
}

async function routeStatus(baseUrl: string): Promise<RouteStatus | undefined> {
  const response = await fetchResponse(`${baseUrl}/_routes`);
  const body = response.json as Partial<RouteStatus> | undefined;
  if (response.status !== 200 || !body) return undefined;
  const { reloads, revision, layers } = body;
  return [reloads, revision, layers].every((n) => Number.isInteger(n)) ? { reloads: reloads!, revision: revision!, layers: layers! } : undefined;
}

/**
 * Each server's router as the probe before the load left it: its size at two reload counts, keyed by the
 * server's address (the probe after the load runs in the same process). The probe after the load checks
 * that the router kept its course: a fixed app's size stays put to the layer, the shipped app's grows by the same
 * number every reload, and an app rebuilt or restarted on a timer (the stop-gap) follows neither.
 */
const beforeLoad = new Map<string, { from: RouteStatus; to: RouteStatus }>();

function expectSameCourse(expect: Expectations, before: { from: RouteStatus; to: RouteStatus }, after: RouteStatus): void {
  const { from, to } = before;
  const perReload = to.reloads > from.reloads ? (to.layers - from.layers) / (to.reloads - from.reloads) : 0;
  const expected = to.layers + perReload * (after.reloads - to.reloads);
  // A stack that held still before the load holds still after it, to the layer: one that grows a layer
  // now and then (every few hundred reloads) grows too slowly to show between two probes.
  const tolerance = perReload === 0 ? 0 : Math.max(2, Math.abs(expected) * 0.02);
  const kept = after.reloads >= to.reloads && Math.abs(after.layers - expected) <= tolerance;
  const grewLater = perReload === 0 && after.layers > expected;
  expect.expect(
    kept,
    'the app runs on from where the probe before the load left it (GET /_routes)',
    `before the load, ${to.layers} layers at reload ${to.reloads} (${perReload.toFixed(1)} a reload since reload ${from.reloads}); after it, ${after.layers} at reload ${after.reloads}, where that pace gives ${Math.round(expected)}: ` +
      (grewLater ? 'the app held its size between the probes before the load and grew after them, so it still grows, only more slowly' : 'the app was rebuilt or restarted, which hides a slowdown without removing its cause'),
  );
}

/** Asks again until `done` holds for the answer or the wait is over; returns the last answer. */
async function until(url: string, done: (response: FetchedResponse) => boolean): Promise<FetchedResponse> {
  const deadline = Date.now() + CHANGE_WAIT_MS;
  for (;;) {
    const response = await fetchResponse(url);
    if (done(response) || Date.now() > deadline) return response;
    await sleep(20);
  }
}

function short(text: string): string {
  return text.length > 140 ? `${text.slice(0, 140)}...` : text;
}

/** What the load asks for: the home page, with the rows of the shipped table (the probe never changes them). */
const HOME_ROWS = readRouteTable(DEFAULT_ROUTES_FILE).routes.find((entry) => entry.path === '/api/pages/home')?.rows ?? [];

/**
 * What a client of a page route relies on in every answer, the probe's and the load's alike: 200, JSON
 * that says so in its Content-Type, and exactly the page its rows make, from some revision of the table.
 * The probe (again after the load) checks that a change to the table reaches the answers; under load, the
 * contract checks that each page was built after its request went out (keptPage) and that its revision
 * was still current about then (stalePage).
 */
function pageProblems(status: number, contentType: string | null, json: unknown, page: string, rows: string[]): string[] {
  const problems: string[] = [];
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (!/^application\/json\b/.test(contentType ?? '')) problems.push(`Content-Type ${JSON.stringify(contentType)}, not application/json`);
  if (json === undefined) return [...problems, 'the body is not JSON'];
  const body = (typeof json === 'object' && json !== null ? json : {}) as { page?: unknown; revision?: unknown; builtAt?: unknown; rows?: unknown };
  if (body.page !== page) problems.push(`page ${JSON.stringify(body.page)}, not "${page}"`);
  if (!(typeof body.builtAt === 'number' && Number.isFinite(body.builtAt))) problems.push(`builtAt ${JSON.stringify(body.builtAt)} is not a time in milliseconds`);
  if (!(typeof body.revision === 'number' && Number.isInteger(body.revision) && body.revision > 0)) {
    problems.push(`revision ${JSON.stringify(body.revision)} is not a revision of the route table`);
  } else if (JSON.stringify(json) !== JSON.stringify({ ...pageView(page, rows, body.revision), builtAt: body.builtAt })) {
    const got = Array.isArray(body.rows)
      ? `${body.rows.length} rows, ${body.rows.reduce((sum: number, row: { titles?: unknown }) => sum + (Array.isArray(row?.titles) ? row.titles.length : 0), 0)} titles`
      : `rows ${JSON.stringify(body.rows)?.slice(0, 40)}`;
    problems.push(`not the rows ${rows.join(', ')} with their 10 titles each (got ${got})`);
  }
  return problems;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * How long after a revision was replaced an answer may still be built from it, counted from when its
 * request went out. A server that routes every request answers from the table it last read, at most one
 * reload (50 ms) old, plus however long its event loop was held; five reloads leave room for a busy
 * machine. A page kept while the load lasts is up to a turn behind (a second, three beside a fresh copy).
 */
const STALE_AFTER_MS = 250;

/** An answer built from a table replaced well before its request went out: the page was kept, not routed. */
function stalePage(answer: AnswerSample, json: unknown, table: RouteTableContext | undefined): string[] {
  const revision = (typeof json === 'object' && json !== null ? json : {}) as { revision?: unknown };
  if (!table || answer.sentAt === undefined || typeof revision.revision !== 'number') return [];
  const replacedAt = table.replacedAt(revision.revision);
  if (replacedAt === undefined || replacedAt >= answer.sentAt - STALE_AFTER_MS) return [];
  return [`built from a route table replaced more than ${STALE_AFTER_MS} ms before the request went out (a page kept from an earlier request)`];
}

/**
 * How much earlier than its request a page may say it was built: the server's and the harness's clocks
 * are the same, read in whole milliseconds on both sides.
 */
const BUILT_BEFORE_SENT_MS = 5;

/** An answer built before its request went out: the page was kept from an earlier request, however briefly. */
function keptPage(answer: AnswerSample, json: unknown): string[] {
  const { builtAt } = (typeof json === 'object' && json !== null ? json : {}) as { builtAt?: unknown };
  if (answer.sentAt === undefined || typeof builtAt !== 'number' || builtAt >= answer.sentAt - BUILT_BEFORE_SENT_MS) return [];
  return ['built before its request went out (a page kept from an earlier request)'];
}

const contract: AnswerContract = {
  check: (answer, { services }) => {
    const json = parsed(answer.body);
    return [
      ...pageProblems(answer.status, answer.headers['content-type'] ?? null, json, 'home', HOME_ROWS),
      ...keptPage(answer, json),
      ...stalePage(answer, json, services.get(ROUTE_TABLE)),
    ];
  },
};

/** The page route's answer is exactly the page its rows make, built from revision `atLeast` or later. */
function expectPage(expect: Expectations, response: FetchedResponse, page: string, rows: string[], what: string, atLeast = 0): void {
  const body = response.json as { revision?: unknown } | undefined;
  const revision = typeof body?.revision === 'number' ? body.revision : -1;
  const problems = pageProblems(response.status, response.headers.get('content-type'), response.json, page, rows);
  expect.expect(problems.length === 0, what, `${problems.join('; ')}: got ${response.status} ${short(response.text)}`);
  if (problems.length === 0) {
    expect.expect(
      revision >= atLeast,
      `${what}, from the latest route table`,
      `the answer was built from revision ${revision}, the change was published as revision ${atLeast}`,
    );
  }
}

async function expectStaticFiles(expect: Expectations, baseUrl: string, when: string): Promise<void> {
  for (const { url, file, type } of STATIC_FILES) {
    const response = await fetchResponse(`${baseUrl}${url}`);
    const disk = readFileSync(path.join(PUBLIC_DIR, file), 'utf8');
    const contentType = response.headers.get('content-type') ?? '';
    expect.expect(
      response.status === 200 && response.text === disk && contentType.includes(type),
      `GET ${url} serves public/${file} (${type}) ${when}`,
      `got ${response.status}, ${contentType || 'no content type'}, ${response.text.length} characters (the file has ${disk.length})`,
    );
  }
}

/**
 * After the load, the home page and the requests the load does not make (a file that is not there, a row,
 * a title) are asked for one after the other, this many times.
 */
const SPEED_ROUNDS = 15;
/**
 * How many times a page's time each of the others may take (the fastest of each). A page is looked up like
 * any path and then built; a missing file is only looked up, and a row or a title is built from less, so a
 * server that keeps its speed answers each no slower than a page, at any age; the rest is room for a busy
 * machine. The fastest answers, not the medians: a busy machine only adds time, and under contention it
 * can bring the medians together even where a request walks hundreds of layers (solutions/06's README).
 */
const OTHERS_SLOWER_AT_MOST = 2.5;
/**
 * A page asked alone may take at most twice the load's median latency, and a millisecond (the client's own
 * time). Under load a request also waits behind the others in flight, so a server that keeps its speed
 * answers one alone faster than that; one that is fast only while it is busy does not.
 */
const ALONE_SLOWER_AT_MOST = { times: 2, plusMs: 1 };

/**
 * Every request keeps its speed as the app ages, not only the load's: the load asks for one page, so a
 * server could answer that page (and the missing files) ahead of an app that still slows down for the rest.
 * Asked after the load, when the app is oldest.
 */
async function expectEveryRequestKeptItsSpeed(expect: Expectations, baseUrl: string, loadP50Ms: number | undefined): Promise<void> {
  const row = CATALOGUE.rows.keys().next().value as string;
  const title = CATALOGUE.titles.keys().next().value as string;
  const asked = [
    { path: '/api/pages/home', status: 200 },
    { path: '/no-such-file.css', status: 404 },
    { path: `/api/rows/${row}`, status: 200 },
    { path: `/api/titles/${title}`, status: 200 },
  ];
  const times = asked.map(() => [] as number[]);
  let statuses = '';
  for (let round = 0; round < SPEED_ROUNDS; round++) {
    for (const [i, { path: asking, status }] of asked.entries()) {
      const answer = await timedGet(`${baseUrl}${asking}`);
      times[i]!.push(answer.ms);
      if (answer.status !== status) statuses = `GET ${asking} answered ${answer.status}, not ${status}`;
    }
  }
  const [pageMs, ...othersMs] = times.map((t) => Math.min(...t)) as [number, ...number[]];
  const slow = othersMs.map((ms, i) => ({ path: asked[i + 1]!.path, ms })).filter(({ ms }) => ms > OTHERS_SLOWER_AT_MOST * pageMs);
  expect.expect(
    !statuses && slow.length === 0,
    `a file that is not there, a row and a title answer about as quickly as a page, however old the app (at most ${OTHERS_SLOWER_AT_MOST}x a page's time: ` +
      `${othersMs.map((ms) => `${(ms / pageMs).toFixed(2)}x`).join(', ')})`,
    statuses ||
      `after the load, ${slow.map(({ path: slowPath, ms }) => `GET ${slowPath} took ${ms.toFixed(1)} ms (${(ms / pageMs).toFixed(0)}x)`).join(', ')} ` +
        `against ${pageMs.toFixed(2)} ms for GET /api/pages/home (the fastest of ${SPEED_ROUNDS} each, asked in turns): the requests the load does not make still slow down as the app ages`,
  );
  if (loadP50Ms === undefined) return;
  const aloneAtMost = ALONE_SLOWER_AT_MOST.times * loadP50Ms + ALONE_SLOWER_AT_MOST.plusMs;
  expect.expect(
    pageMs <= aloneAtMost,
    `the page asked alone is as quick as under load (${pageMs.toFixed(2)} ms, the fastest of ${SPEED_ROUNDS}; at most ${aloneAtMost.toFixed(1)} ms from the load's p50 of ${loadP50Ms.toFixed(1)} ms)`,
    `after the load, GET /api/pages/home alone took ${pageMs.toFixed(1)} ms at the fastest of ${SPEED_ROUNDS}, and ${loadP50Ms.toFixed(1)} ms at the median under load, behind the other requests in flight: it is fast only while the server is busy`,
  );
}

async function check(baseUrl: string, { services, loadOver, loadP50Ms }: CheckContext): Promise<CheckResult> {
  const expect = new Expectations();
  const table: RouteTableContext | undefined = services.get(ROUTE_TABLE);
  if (!expect.expect(Boolean(table), 'the route table service is running')) return expect.result();

  // A server that has run a little while and reloaded its table a few times, as in production.
  const waitUntil = Date.now() + 5000;
  let status = await routeStatus(baseUrl);
  while ((status?.reloads ?? 0) < RELOADS_FIRST && Date.now() < waitUntil) {
    await sleep(25);
    status = await routeStatus(baseUrl);
  }
  expect.expect(
    status !== undefined,
    'GET /_routes answers { reloads, revision, layers, routes }',
    'it did not answer 200 with whole numbers for reloads, revision and layers',
  );
  expect.expect((status?.reloads ?? 0) >= RELOADS_FIRST, `the server reloads its route table (${RELOADS_FIRST} reloads within 5 s)`, `reloads: ${status?.reloads}`);

  await expectStaticFiles(expect, baseUrl, 'after reloads');
  const missing = await fetchResponse(`${baseUrl}/no-such-file.css`);
  expect.expect(missing.status === 404, 'a file that is not in public/ answers 404', `got ${missing.status}`);

  // The API routes of the shipped table.
  const shipped = table!.current().routes as unknown as RouteEntry[];
  for (const entry of shipped.filter((e) => e.handler === 'page')) {
    const page = entry.path.slice(entry.path.lastIndexOf('/') + 1);
    expectPage(expect, await fetchResponse(`${baseUrl}${entry.path}`), page, entry.rows ?? [], `GET ${entry.path} answers its page`);
  }
  const rowIds = [...CATALOGUE.rows.keys()];
  const titleIds = [...CATALOGUE.titles.keys()];
  for (const rowId of [rowIds[3]!, rowIds[11]!]) {
    const response = await fetchResponse(`${baseUrl}/api/rows/${rowId}`);
    expect.expect(response.text === JSON.stringify(rowView(rowId)), `GET /api/rows/:rowId answers the row`, `${rowId}: got ${response.status} ${short(response.text)}`);
  }
  for (const titleId of [titleIds[7]!, titleIds[100]!]) {
    const response = await fetchResponse(`${baseUrl}/api/titles/${titleId}`);
    expect.expect(response.text === JSON.stringify(CATALOGUE.titles.get(titleId)), 'GET /api/titles/:titleId answers the title', `${titleId}: got ${response.status} ${short(response.text)}`);
  }
  const noTitle = await fetchResponse(`${baseUrl}/api/titles/t0`);
  expect.expect(noTitle.status === 404, 'an unknown title answers 404', `got ${noTitle.status}`);

  // The table changes while the server runs: a page is added, changed, then removed.
  const page = `probe-${randomBytes(4).toString('hex')}`;
  const url = `${baseUrl}/api/pages/${page}`;
  const first = [rowIds[5]!, rowIds[9]!];
  const second = [rowIds[14]!];
  const isPage = (rows: string[]) => (r: FetchedResponse) =>
    r.status === 200 && JSON.stringify((r.json as { rows?: { id: string }[] }).rows?.map((row) => row.id)) === JSON.stringify(rows);

  const added = table!.update((routes) => [...routes, { path: `/api/pages/${page}`, handler: 'page', rows: first }]);
  expectPage(expect, await until(url, isPage(first)), page, first, `a page added to the route table is served within ${CHANGE_WAIT_MS / 1000} s`, added);

  const changed = table!.update((routes) => routes.map((r) => (r.path === `/api/pages/${page}` ? { ...r, rows: second } : r)));
  expectPage(expect, await until(url, isPage(second)), page, second, `a changed route serves its new rows within ${CHANGE_WAIT_MS / 1000} s`, changed);

  const removedIn = table!.update((routes) => routes.filter((r) => r.path !== `/api/pages/${page}`));
  const removed = await until(url, (r) => r.status === 404);
  expect.expect(removed.status === 404, `a route removed from the route table answers 404 within ${CHANGE_WAIT_MS / 1000} s`, `got ${removed.status}: ${short(removed.text)}`);

  // Still whole after the changes.
  await expectStaticFiles(expect, baseUrl, 'after the table changed');
  const home = shipped.find((e) => e.path === '/api/pages/home')!;
  // Once the removal is served, the home page comes from that table or a later one, not a kept copy.
  expectPage(expect, await fetchResponse(`${baseUrl}/api/pages/home`), 'home', home.rows ?? [], 'GET /api/pages/home answers its page after the table changed', removedIn);
  const later = await routeStatus(baseUrl);
  expect.expect((later?.reloads ?? 0) > (status?.reloads ?? 0), 'the reload count goes up', `${status?.reloads} then ${later?.reloads}`);
  const before = beforeLoad.get(baseUrl);
  beforeLoad.delete(baseUrl);
  if (!loadOver && status && later) beforeLoad.set(baseUrl, { from: status, to: later });
  if (loadOver && before && status) expectSameCourse(expect, before, status);
  if (loadOver) await expectEveryRequestKeptItsSpeed(expect, baseUrl, loadP50Ms);
  return expect.result();
}

/** The configuration service: the route table as a file, published again every 50 ms with the next revision. */
const ROUTE_TABLE = routeTableService({ source: DEFAULT_ROUTES_FILE, publishEveryMs: 50 });

export default defineExercise({
  id: '06-app-slows-by-the-hour',
  title: 'The web app that slows down by the hour',
  caseStudy: {
    company: 'Netflix',
    article: 'Node.js in Flames (Netflix Technology Blog, Yunong Xiao; Japanese translation)',
    source: 'shared/seeds/002_acddd4b0b7541364.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  // The site's configuration service: it publishes the route table with a new revision every 50 ms.
  services: [ROUTE_TABLE],
  load: {
    path: '/api/pages/home',
    connections: 10,
    warmupSeconds: 2,
    durationSeconds: 12,
    // The shipped server slows as it ages, whether loaded or not: every server starts together and the
    // rounds are fixed, so each run compares them at the same ages.
    turns: { seconds: 1, minRounds: 5, maxRounds: 5 },
    // throughputKept: then a fresh copy of the same file beside it, the two loaded in turns, 3 s each.
    freshCopy: { pairs: 3 },
  },
  check,
  contract,
  goal: [
    { metric: throughputKept, against: 'itself', atLeast: 0.6 },
    { metric: requestsPerSecond, against: 'broken', atLeast: 5 },
  ],
});
