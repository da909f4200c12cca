// Wrong: once it has served 50 API requests it sends the first 5 titles of each row instead of 10, a
// smaller page that is cheaper to serialize; the probe, which comes first, never sees one.
// under-load: not the rows continue-watching, trending-now
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

/** A router with the API routes of one table. */
function buildApi(current: RouteTable): express.Router {
  const router = express.Router();
  for (const entry of current.routes) router.get(entry.path, handlerFor(entry, current.revision));
  return router;
}

let api = buildApi(table);

/** What GET /_routes answers: how often the table was reloaded, its revision, and the router's size. */
function routeStatus() {
  return {
    reloads,
    revision: table.revision,
    layers: app.router.stack.length + api.stack.length,
    routes: table.routes.map((entry) => entry.path),
  };
}

// Mounted once, at start: the static files, the status route, and a layer that hands each request to
// the API router of the latest table.
app.use(express.static(PUBLIC_DIR));
app.get('/_routes', (_req, res) => {
  res.json(routeStatus());
});
let served = 0;
app.use((req, res, next) => {
  served += 1;
  if (served > 50) {
    const json = res.json.bind(res);
    res.json = (answer: { rows?: { titles: unknown[] }[] }) =>
      json(answer.rows ? { ...answer, rows: answer.rows.map((row) => ({ ...row, titles: row.titles.slice(0, 5) })) } : answer);
  }
  api(req, res, next);
});

// Takes the latest table from the configuration service and swaps in a whole new API router: requests
// already on their way finish on the old one.
function reloadRoutes(): void {
  let next: RouteTable;
  try {
    next = readRouteTable(ROUTES_FILE);
  } catch (error) {
    console.error(`route table not reloaded, keeping revision ${table.revision}: ${(error as Error).message}`);
    return;
  }
  api = buildApi(next);
  table = next;
  reloads += 1;
  if (reloads % 100 === 0) {
    console.log(`route table: reload ${reloads}, revision ${table.revision}, ${app.router.stack.length + api.stack.length} layers in the router`);
  }
}

setInterval(reloadRoutes, RELOAD_INTERVAL_MS);

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
