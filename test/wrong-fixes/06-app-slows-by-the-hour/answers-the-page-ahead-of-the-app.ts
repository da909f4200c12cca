// Wrong: the shipped app, with a small router of its own in front of it that answers the API pages of the
// current table by path, each from its handler in site.ts, "route the hot path around the slow router".
// Every page is built for its request from the latest table, the load's too, and the load asks for a page
// only; everything else still goes down the app's router, which grows with every reload as shipped.
// under-load: answer about as quickly as a page
// measured-seconds: 12
// load-rate: 300
// (Its app must be old enough for the missing file's walk down the router to show beside a page, on a
// busy machine too: the known-wrong fixes' usual 2 s leave it too few layers; solutions/06's README.)
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
// In front of the app, a small router of its own: the API pages of the current table by path, each
// answered by its handler from site.ts; everything else goes on to the app, which still grows.
const front = express();
let pages = new Map<string, express.RequestHandler>();
front.get('/api/pages/:page', (req, res, next) => {
  const handler = pages.get(req.path);
  if (handler) handler(req, res, next);
  else next();
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
