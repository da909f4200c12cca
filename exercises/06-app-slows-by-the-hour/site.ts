// The web app's data and its route handlers: the catalogue of titles and rows, the route table's format,
// and how a route entry becomes an Express handler. Shared by the server, the solution stages and the
// correctness probe. The bug is not in this file.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';

/** The static files of the site (index.html, app.js, styles.css, ...). */
export const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));
/** The route table as shipped; the workshop gives each server its own copy in ROUTES_FILE. */
export const DEFAULT_ROUTES_FILE = fileURLToPath(new URL('./routes.json', import.meta.url));

// ---------------------------------------------------------------------------------------------------
// The catalogue: titles and the rows that group them. Deterministic, so the probe can compute every answer.
// ---------------------------------------------------------------------------------------------------

export interface Title {
  id: string;
  name: string;
  year: number;
  maturity: string;
  genres: string[];
  runtimeMinutes: number;
  synopsis: string;
}

export interface Row {
  id: string;
  name: string;
  titleIds: string[];
}

const FIRST = ['The Last', 'Midnight', 'Silent', 'Broken', 'Golden', 'Hidden', 'Northern', 'Crimson', 'Lost', 'Wild', 'Paper', 'Iron'];
const SECOND = ['Harbor', 'Signal', 'Orchard', 'Frontier', 'Kingdom', 'Tide', 'Archive', 'Comet', 'Garden', 'Witness', 'Circuit', 'Lantern'];
const GENRES = ['drama', 'comedy', 'thriller', 'documentary', 'animation', 'crime', 'sci-fi', 'romance', 'horror', 'family'];
const MATURITY = ['G', 'PG', 'PG-13', 'R', 'TV-Y', 'TV-14', 'TV-MA'];
const ROW_NAMES: Record<string, string> = {
  'continue-watching': 'Continue Watching',
  'trending-now': 'Trending Now',
  'new-releases': 'New Releases',
  'top-10-today': 'Top 10 Today',
  'because-you-watched': 'Because You Watched Paper Comet',
  'award-winning-dramas': 'Award-Winning Dramas',
  'critically-acclaimed': 'Critically Acclaimed',
  'documentaries': 'Documentaries',
  'animated-adventures': 'Animated Adventures',
  'family-movie-night': 'Family Movie Night',
  'kids-tv': 'Kids TV',
  'crime-series': 'Crime Series',
  'sci-fi-and-fantasy': 'Sci-Fi & Fantasy',
  'romantic-comedies': 'Romantic Comedies',
  'late-night-horror': 'Late-Night Horror',
  'hidden-gems': 'Hidden Gems',
};

/** A small linear congruential generator: the same catalogue in every process. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function buildCatalogue(): { titles: Map<string, Title>; rows: Map<string, Row> } {
  const random = generator(2016);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const titles = new Map<string, Title>();
  for (let i = 0; i < FIRST.length * SECOND.length; i++) {
    const id = `t${80_000_000 + i * 7_919}`;
    const name = `${FIRST[i % FIRST.length]} ${SECOND[Math.floor(i / FIRST.length)]}`;
    const genres = [pick(GENRES), pick(GENRES)].filter((g, j, all) => all.indexOf(g) === j);
    titles.set(id, {
      id,
      name,
      year: 1990 + Math.floor(random() * 36),
      maturity: pick(MATURITY),
      genres,
      runtimeMinutes: 22 + Math.floor(random() * 140),
      synopsis: `${name}: a ${genres.join(' and ')} story of ${pick(['two sisters', 'a lighthouse keeper', 'a retired detective', 'a band on tour', 'an orbiting crew', 'a small-town mayor'])} and ${pick(['a secret', 'a storm', 'a long winter', 'an inheritance', 'a missing map', 'the last train'])}.`,
    });
  }
  const ids = [...titles.keys()];
  const rows = new Map<string, Row>();
  for (const [id, name] of Object.entries(ROW_NAMES)) {
    const titleIds: string[] = [];
    while (titleIds.length < 10) {
      const titleId = pick(ids);
      if (!titleIds.includes(titleId)) titleIds.push(titleId);
    }
    rows.set(id, { id, name, titleIds });
  }
  return { titles, rows };
}

export const CATALOGUE = buildCatalogue();

// ---------------------------------------------------------------------------------------------------
// What the API answers. The probe computes the same views to check the server's answers.
// ---------------------------------------------------------------------------------------------------

export interface TitleCard {
  id: string;
  name: string;
  year: number;
  maturity: string;
}

export interface RowView {
  id: string;
  name: string;
  titles: TitleCard[];
}

export interface PageView {
  page: string;
  /** The revision of the route table this answer was built from. */
  revision: number;
  /** When this answer was built, in milliseconds since the epoch: a page is built for the request it answers. */
  builtAt: number;
  rows: RowView[];
}

function card(title: Title): TitleCard {
  return { id: title.id, name: title.name, year: title.year, maturity: title.maturity };
}

export function rowView(rowId: string): RowView | undefined {
  const row = CATALOGUE.rows.get(rowId);
  if (!row) return undefined;
  return { id: row.id, name: row.name, titles: row.titleIds.map((id) => card(CATALOGUE.titles.get(id)!)) };
}

export function pageView(page: string, rows: string[], revision: number, builtAt = Date.now()): PageView {
  return { page, revision, builtAt, rows: rows.map(rowView).filter((row): row is RowView => row !== undefined) };
}

// ---------------------------------------------------------------------------------------------------
// The route table, as the site's configuration service publishes it.
// ---------------------------------------------------------------------------------------------------

/**
 * One API route. `page` answers a page made of the rows it lists; `row` and `title` look up the
 * catalogue by the route's :rowId or :titleId.
 */
export interface RouteEntry {
  path: string;
  handler: 'page' | 'row' | 'title';
  rows?: string[];
}

export interface RouteTable {
  /** Goes up by one with every publication of the table. */
  revision: number;
  publishedAt?: string;
  routes: RouteEntry[];
}

/** Reads and checks the route table; throws with the reason when it is not usable. */
export function readRouteTable(file: string): RouteTable {
  const table = JSON.parse(readFileSync(file, 'utf8')) as RouteTable;
  if (!Number.isInteger(table.revision) || !Array.isArray(table.routes)) throw new Error(`${file}: not a route table (revision, routes)`);
  for (const entry of table.routes) {
    if (typeof entry.path !== 'string' || !entry.path.startsWith('/api/')) throw new Error(`${file}: route path ${JSON.stringify(entry.path)} must start with /api/`);
    if (!['page', 'row', 'title'].includes(entry.handler)) throw new Error(`${file}: unknown handler ${JSON.stringify(entry.handler)} for ${entry.path}`);
  }
  return table;
}

/** The Express handler for one entry of the route table; it answers from the revision it was built for. */
export function handlerFor(entry: RouteEntry, revision: number): RequestHandler {
  switch (entry.handler) {
    case 'page': {
      const page = entry.path.slice(entry.path.lastIndexOf('/') + 1);
      const rows = entry.rows ?? [];
      return (_req, res) => {
        res.json(pageView(page, rows, revision));
      };
    }
    case 'row':
      return (req, res) => {
        const row = rowView(String(req.params.rowId));
        if (row) res.json(row);
        else res.status(404).json({ error: `no row ${req.params.rowId}` });
      };
    case 'title':
      return (req, res) => {
        const title = CATALOGUE.titles.get(String(req.params.titleId));
        if (title) res.json(title);
        else res.status(404).json({ error: `no title ${req.params.titleId}` });
      };
  }
}
