// The route-table service: a configuration service that publishes a route table as a file, the way a
// config system pushes a document to every instance. Each server run gets its own copy of the exercise's
// table (ROUTES_FILE). The service publishes it again every publishEveryMs with the next revision, and a
// correctness probe changes the routes through it. Every publication replaces the file in one rename, so
// a server never reads half a table.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defineService, type Service, type StartedService } from '../service.ts';

/** The published document: a revision that goes up with every publication, and the routes. */
export interface PublishedTable<Route = Record<string, unknown>> {
  revision: number;
  publishedAt: string;
  routes: Route[];
}

export interface RouteTableContext {
  /** The file the server reads (ROUTES_FILE). */
  file: string;
  /** The table as last published. */
  current(): PublishedTable;
  /** Changes the routes and publishes them at once; returns the revision they were published under. */
  update(change: (routes: Record<string, unknown>[]) => Record<string, unknown>[]): number;
  /**
   * Date.now() when the revision after this one was published: from then on this one is out of date.
   * Undefined for the latest, and for one this service did not publish or no longer remembers.
   */
  replacedAt(revision: number): number | undefined;
}

/** How many publications' times are remembered: 30 minutes at one every 50 ms (at least half that once it fills). */
const REMEMBERED = 36_000;

export interface RouteTableOptions {
  /** The table as shipped: a JSON file with `revision` and `routes`. */
  source: string;
  /** How often the table is published again with the next revision (0: only when a probe changes it). */
  publishEveryMs?: number;
}

export function routeTableService(options: RouteTableOptions): Service<RouteTableContext> {
  return defineService({ name: 'route table service', start: (directory) => startRouteTables(directory, options) });
}

async function startRouteTables(directory: string, options: RouteTableOptions): Promise<StartedService<RouteTableContext>> {
  const shipped = JSON.parse(readFileSync(options.source, 'utf8')) as PublishedTable;
  if (!Number.isInteger(shipped.revision) || !Array.isArray(shipped.routes)) throw new Error(`${options.source} has no revision and routes`);
  let count = 0;
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;

  return {
    async prepare() {
      // Only the latest server reads a table: the one before it has stopped.
      clearInterval(timer);
      const file = path.join(directory, `routes-${++count}.json`);
      let table: PublishedTable = { ...shipped, routes: structuredClone(shipped.routes) };
      // When each revision was published, from `firstRevision` on.
      const publishedAt: number[] = [];
      let firstRevision = shipped.revision + 1;
      const publish = (routes = table.routes): number => {
        const now = Date.now();
        table = { revision: table.revision + 1, publishedAt: new Date(now).toISOString(), routes };
        publishedAt.push(now);
        if (publishedAt.length > REMEMBERED) {
          // Half at a time, not one: a shift per publication would move the whole array every 50 ms.
          publishedAt.splice(0, REMEMBERED / 2);
          firstRevision += REMEMBERED / 2;
        }
        writeFileSync(`${file}.next`, JSON.stringify(table, null, 2));
        renameSync(`${file}.next`, file);
        return table.revision;
      };
      publish();
      if (options.publishEveryMs) {
        timer = setInterval(() => publish(), options.publishEveryMs);
        timer.unref();
      }
      last = file;
      const context: RouteTableContext = {
        file,
        current: () => structuredClone(table),
        update: (change) => publish(change(structuredClone(table.routes))),
        replacedAt: (revision) => (revision >= firstRevision ? publishedAt[revision + 1 - firstRevision] : undefined),
      };
      return { env: { ROUTES_FILE: file }, context };
    },
    describe: () =>
      `configuration service: the route table is ${last ?? `in ${directory}`}${options.publishEveryMs ? `, published again every ${options.publishEveryMs} ms with the next revision` : ''}`,
    async stop() {
      clearInterval(timer);
    },
  };
}
