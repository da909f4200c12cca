// Wrong: the shipped reload, but the static files are mounted again only every 400th reload ("to pick up a
// new deploy of public/"), the API routes every reload as before: the leak is still there, one
// serve-static layer in front of the API every 20 s, 180 an hour, and the app still slows by the hour,
// only slowly: a layer or two over a run.
// under-load: grew after them, so it still grows
// It ages by the clock, not by requests: a run long enough for a remount, at a gentle rate.
// measured-seconds: 21
// load-rate: 100
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
const ROUTES_FILE = process.env.ROUTES_FILE ?? DEFAULT_ROUTES_FILE;

const app = express();
let table = readRouteTable(ROUTES_FILE);
let reloads = 0;

/** What GET /_routes answers: how often the table was reloaded, its revision, and the router's size. */
function routeStatus() {
  return {
    reloads,
    revision: table.revision,
    layers: app.router.stack.length,
    routes: table.routes.map((entry) => entry.path),
  };
}

// Mounts the site on the app: the static files first (the pages ask for them the most), then the API.
function mountSite(current: RouteTable): void {
  if (reloads % 400 === 0) app.use(express.static(PUBLIC_DIR));
  app.get('/_routes', (_req, res) => {
    res.json(routeStatus());
  });
  for (const entry of current.routes) app.get(entry.path, handlerFor(entry, current.revision));
}

// Takes the latest table from the configuration service: the old API routes go, the new ones come in.
function reloadRoutes(): void {
  let next: RouteTable;
  try {
    next = readRouteTable(ROUTES_FILE);
  } catch (error) {
    console.error(`route table not reloaded, keeping revision ${table.revision}: ${(error as Error).message}`);
    return;
  }
  app.router.stack = app.router.stack.filter((layer) => !layer.route);
  mountSite(next);
  table = next;
  reloads += 1;
  if (reloads % 100 === 0) {
    console.log(`route table: reload ${reloads}, revision ${table.revision}, ${app.router.stack.length} layers in the router`);
  }
}

mountSite(table);
setInterval(reloadRoutes, RELOAD_INTERVAL_MS);

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
