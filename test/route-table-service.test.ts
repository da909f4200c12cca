import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startServices } from '../scripts/services/index.ts';
import { routeTableService, type PublishedTable } from '../scripts/services/route-table.ts';
import { DEFAULT_ROUTES_FILE } from '../exercises/06-app-slows-by-the-hour/site.ts';

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
    await sleep(150);
    expect(read(file).revision).toBeGreaterThanOrEqual(start.revision + 3);
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

    await services.stop();
    expect(existsSync(path.dirname(file))).toBe(false);
  });
});
