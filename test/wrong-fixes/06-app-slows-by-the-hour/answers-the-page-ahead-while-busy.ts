// Wrong: the shipped app, still growing, behind a small front that answers the table's pages by path,
// each built for its request from its handler in site.ts, but only while the server is busy (20 requests
// within 100 ms, or another still in flight). Alone, a page goes down the grown router like a missing
// file, a row or a title, so every one of them takes about as long as a page when asked one at a time.
// in-turns: the page asked alone is as quick as under load
// (Judged in the author check's run: beside the other known-wrong fixes' loads the load's p50 grew with the
// machine's queue, and the file went unrejected in a CI run; in turns it read 33.5 ms against 3.7 allowed.)
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
const front = express();
let pages = new Map<string, express.RequestHandler>();

// Arrivals in the last 100 ms, in a ring of timestamps.
const WINDOW_MS = 100;
const LOADED_AT = 20;
const arrivals = new Float64Array(LOADED_AT);
let arrival = 0;
function loaded(): boolean {
  const now = performance.now();
  const oldest = arrivals[arrival % LOADED_AT]!; // the arrival LOADED_AT ago
  arrivals[arrival % LOADED_AT] = now;
  arrival += 1;
  return arrival > LOADED_AT && now - oldest < WINDOW_MS;
}

// Requests begun and not yet answered: more than one at once is the load (the probe asks one at a time).
let inFlight = 0;
front.use((req, res, next) => {
  const busy = loaded() || inFlight >= 1;
  inFlight += 1;
  let done = false;
  const end = () => {
    if (!done) (done = true), (inFlight -= 1);
  };
  res.once('finish', end);
  res.once('close', end);
  if (busy && req.method === 'GET') {
    const handler = pages.get(req.path);
    if (handler) return handler(req, res, next);
  }
  next();
});
front.use(app);
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
  app.use(express.static(PUBLIC_DIR));
  app.get('/_routes', (_req, res) => {
    res.json(routeStatus());
  });
  for (const entry of current.routes) app.get(entry.path, handlerFor(entry, current.revision));
  pages = new Map(current.routes.filter((e) => e.handler === 'page').map((e) => [e.path, handlerFor(e, current.revision)]));
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

front.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
