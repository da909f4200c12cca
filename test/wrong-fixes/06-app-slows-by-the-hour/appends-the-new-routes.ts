// Wrong: static files mounted once, but each reload appends the table's routes after the old ones. The
// first match wins, so a route keeps the answer it had when it first appeared (and the stack still grows).
// probe: a changed route serves its new rows
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

// Mounted once, at start: the static files, the status route, and a layer that hands each request to
// the API router of the latest table.
app.use(express.static(PUBLIC_DIR));
app.get('/_routes', (_req, res) => {
  res.json(routeStatus());
});
for (const entry of table.routes) app.get(entry.path, handlerFor(entry, table.revision));

// Takes the latest table from the configuration service and swaps in a whole new API router: requests
// already on their way finish on the old one.
function reloadRoutes(): void {
  // Only the API routes are added again; the static files stay mounted once.
  let next: RouteTable;
  try {
    next = readRouteTable(ROUTES_FILE);
  } catch (error) {
    console.error(`route table not reloaded, keeping revision ${table.revision}: ${(error as Error).message}`);
    return;
  }
  for (const entry of next.routes) app.get(entry.path, handlerFor(entry, next.revision));
  table = next;
  reloads += 1;
  if (reloads % 100 === 0) {
    console.log(`route table: reload ${reloads}, revision ${table.revision}, ${app.router.stack.length} layers in the router`);
  }
}

setInterval(reloadRoutes, RELOAD_INTERVAL_MS);

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
