import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServices } from '../scripts/services/index.ts';
import { routeTableService, type PublishedTable, type RouteTableContext } from '../scripts/services/route-table.ts';
import { ServiceContexts } from '../scripts/service.ts';
import exercise06 from '../exercises/06-app-slows-by-the-hour/exercise.ts';
import { DEFAULT_ROUTES_FILE, pageView, readRouteTable } from '../exercises/06-app-slows-by-the-hour/site.ts';
import type { AnswerSample } from '../scripts/manifest.ts';

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as PublishedTable;

describe('route-table service', () => {
  it('gives each server its own copy, publishes the next revision on a timer and on a change, and removes its data on stop', async () => {
    const shipped = read(DEFAULT_ROUTES_FILE);
    const wanted = routeTableService({ source: DEFAULT_ROUTES_FILE, publishEveryMs: 20 });
    const services = await startServices([wanted]);
    const first = await services.prepare();
    const second = await services.prepare();
    const file = second.contexts.get(wanted)!.file;
    expect(second.env.ROUTES_FILE).toBe(file);
    expect(first.env.ROUTES_FILE).not.toBe(file);

    // Published at once, with the shipped routes and the next revision.
    const start = read(file);
    expect(start.routes).toEqual(shipped.routes);
    expect(start.revision).toBeGreaterThan(shipped.revision);
    expect(Date.parse(start.publishedAt)).toBeGreaterThan(0);

    // Published again on the timer, for the latest server only.
    const firstFile = first.contexts.get(wanted)!.file;
    const firstRevision = read(firstFile).revision;
    // Three reloads, waited for: a busy machine fires the timer late.
    await expect.poll(() => read(file).revision, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(start.revision + 3);
    expect(read(firstFile).revision).toBe(firstRevision);

    // A change is published at once, under a revision the file carries.
    const table = second.contexts.get(wanted)!;
    const revision = table.update((routes) => [...routes, { path: '/api/pages/extra', handler: 'page', rows: ['hidden-gems'] }]);
    const changed = read(file);
    expect(changed.revision).toBeGreaterThanOrEqual(revision);
    expect(changed.routes.at(-1)).toEqual({ path: '/api/pages/extra', handler: 'page', rows: ['hidden-gems'] });
    expect(table.current().routes).toHaveLength(shipped.routes.length + 1);
    // The context hands out copies: changing one does not publish anything.
    table.current().routes.pop();
    expect(table.current().routes).toHaveLength(shipped.routes.length + 1);

    // When each revision was replaced: the next one's publication; the latest, and one never published, not yet.
    const latest = table.current();
    expect(table.replacedAt(latest.revision)).toBeUndefined();
    expect(table.replacedAt(latest.revision - 1)).toBe(Date.parse(latest.publishedAt));
    expect(table.replacedAt(start.revision)).toBeLessThanOrEqual(Date.parse(latest.publishedAt));
    expect(table.replacedAt(start.revision)).toBeGreaterThanOrEqual(Date.parse(start.publishedAt));
    expect(table.replacedAt(shipped.revision)).toBeUndefined();

    await services.stop();
    expect(existsSync(path.dirname(file))).toBe(false);
  });

  it("06's contract: a page built before its request went out, or from a table replaced well before it, was kept, not routed", async () => {
    const services = await startServices(exercise06.services!);
    try {
      const { contexts } = await services.prepare();
      const table = contexts.get(exercise06.services![0]!) as RouteTableContext;
      // Seven reloads, waited for (a busy machine fires the timer late): the revision six back must be remembered.
      const first = table.current().revision;
      await expect.poll(() => table.current().revision, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(first + 7);
      const rows = readRouteTable(DEFAULT_ROUTES_FILE).routes.find((entry) => entry.path === '/api/pages/home')!.rows!;
      const latest = table.current().revision;
      // Built as its request went out: the table's reload phase then cannot move sentAt past builtAt.
      const page = (revision: number, sentAt: number): AnswerSample => ({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(pageView('home', rows, revision, sentAt)),
        receivedAt: sentAt + 2,
        sentAt,
      });
      const check = (answer: AnswerSample) => exercise06.contract.check(answer, { services: contexts });
      const old = latest - 6;
      // A reload behind (the server reads the table every 50 ms): kept to the contract.
      expect(check(page(old, table.replacedAt(old)! + 60))).toEqual([]);
      expect(check(page(latest, Date.now()))).toEqual([]);
      // Its table replaced 300 ms before the request: a kept page.
      expect(check(page(old, table.replacedAt(old)! + 300)).join('; ')).toMatch(/replaced more than 250 ms before the request went out/);
      // Built before its request went out, however recently: a kept page. A page built for the request
      // may read up to the clocks' millisecond earlier, and a page must say when it was built.
      const built = (revision: number, sentAt: number, builtAt: number | undefined): AnswerSample => ({
        ...page(revision, sentAt),
        body: JSON.stringify({ ...pageView('home', rows, revision), builtAt }),
      });
      const now = Date.now();
      expect(check(built(latest, now, now - 20)).join('; ')).toMatch(/built before its request went out/);
      expect(check(built(latest, now, now - 1))).toEqual([]);
      expect(check(built(latest, now, now + 3))).toEqual([]);
      expect(check(built(latest, now, undefined))).toEqual(['builtAt undefined is not a time in milliseconds']);
      // Without the request's time, or the service's record of the revision, nothing to compare.
      const { sentAt: _sentAt, ...undated } = page(old, table.replacedAt(old)! + 300);
      expect(check(undated)).toEqual([]);
      expect(exercise06.contract.check(page(old, table.replacedAt(old)! + 300), { services: new ServiceContexts() })).toEqual([]);
    } finally {
      await services.stop();
    }
  });
});
