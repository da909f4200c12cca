// Wrong: the stop-gap, not the fix. The shipped app, built afresh every 2 s and swapped in, as a restart
// would: no app lives long enough to slow down, and the router of each still grows with every reload.
// under-load: the app runs on from where the probe before the load left it
import http from 'node:http';
import express from 'express';
import {
  DEFAULT_ROUTES_FILE,
  PUBLIC_DIR,
  handlerFor,
  readRouteTable,
  type RouteTable,
} from '../../../exercises/06-app-slows-by-the-hour/site.ts';

// Production re-reads the table every few minutes; here every 50 ms, so hours pass in seconds.
const RELOAD_INTERVAL_MS = 50;
const REBUILD_EVERY_MS = 2000;
const ROUTES_FILE = process.env.ROUTES_FILE ?? DEFAULT_ROUTES_FILE;

let reloads = 0;

/** The shipped app, as it starts: its own route table and reload timer. */
function startApp(): { app: express.Express; stop(): void } {
  const app = express();
  let table = readRouteTable(ROUTES_FILE);

  function routeStatus() {
    return { reloads, revision: table.revision, layers: app.router.stack.length, routes: table.routes.map((entry) => entry.path) };
  }

  function mountSite(current: RouteTable): void {
    app.use(express.static(PUBLIC_DIR));
    app.get('/_routes', (_req, res) => {
      res.json(routeStatus());
    });
    for (const entry of current.routes) app.get(entry.path, handlerFor(entry, current.revision));
  }

  function reloadRoutes(): void {
    let next: RouteTable;
    try {
      next = readRouteTable(ROUTES_FILE);
    } catch {
      return;
    }
    app.router.stack = app.router.stack.filter((layer) => !layer.route);
    mountSite(next);
    table = next;
    reloads += 1;
  }

  mountSite(table);
  const timer = setInterval(reloadRoutes, RELOAD_INTERVAL_MS);
  return { app, stop: () => clearInterval(timer) };
}

let current = startApp();
setInterval(() => {
  const old = current;
  current = startApp();
  old.stop();
}, REBUILD_EVERY_MS);

http.createServer((req, res) => current.app(req, res)).listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
