// Wrong: keeps each page's answer by URL for 100 ms and serves it again without going down the router. Its
// pages are at most a reload and those 100 ms behind the table, inside the 250 ms the load's answers may
// lag, and the router still grows: only the requests it does not keep slow down as the app ages. Each kept
// answer was built for an earlier request.
// under-load: built before its request went out
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
  app.use(express.static(PUBLIC_DIR));
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

// Each page's answer, kept for KEEP_MS from when it was built.
const KEEP_MS = 100;
const pages = new Map<string, { type: string; body: unknown; at: number }>();
app.use((req, res, next) => {
  if (req.method !== 'GET' || !req.path.startsWith('/api/pages/')) return next();
  const hit = pages.get(req.originalUrl);
  if (hit && Date.now() - hit.at < KEEP_MS) {
    res.type(hit.type).send(hit.body);
    return;
  }
  const send = res.send.bind(res);
  res.send = ((body: unknown) => {
    if (res.statusCode === 200) pages.set(req.originalUrl, { type: String(res.get('Content-Type')), body, at: Date.now() });
    else pages.delete(req.originalUrl);
    return send(body as never);
  }) as typeof res.send;
  next();
});

mountSite(table);
setInterval(reloadRoutes, RELOAD_INTERVAL_MS);

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
