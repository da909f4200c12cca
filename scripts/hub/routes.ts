// The hub's routes: a table of method + path pattern → handler. A path that matches no pattern is a 404; a
// known path with another method is a 405. Path segments are matched against narrow patterns (exercise
// and deck ids, a run's UUID, an asset name), and only names found in the manifests, the slides folder or
// the asset allowlist are served.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MarkdownIt } from 'markdown-it';
import type { Exercise } from '../exercises.ts';
import { stretchText } from '../commands/verify.ts';
import { resolveExerciseId } from '../exercises.ts';
import { stretchStage } from '../verdict.ts';
import { latestDoctorResult } from '../results.ts';
import { currentIdOf } from '../former-ids.ts';
import { nextExercise } from '../commands/list.ts';
import { exerciseProgress, readProgress, solutionUnlocked, updateExercise } from '../progress.ts';
import { deckPage, listDecks, loadDeck } from './slides.ts';
import { demoChoices, verifyChoices } from '../bench.ts';
import { choicesOf, parseDoctorServer, parseServers } from './choices.ts';
import { HttpError, readJson, redirect, send, sendHtml, sendJson } from './http.ts';
import { errorPage, exercisePage, hintButton, hintsStatus, homePage, slidesIndexPage, solutionViewPage, statusOf } from './pages.ts';
import type { RunRequest } from './run-worker.ts';
import type { Runs } from './runs.ts';
import { readAsset, type Asset } from './static.ts';

export interface HubContext {
  exercises(): Promise<Exercise[]>;
  runs: Runs;
  assets: Map<string, Asset>;
  markdown: MarkdownIt;
  /** Where `doctor` writes its results (default .hotpath/results/); the tests use a folder of their own. */
  resultsDir?: string;
}

type Handler = (ctx: HubContext, req: IncomingMessage, res: ServerResponse, params: string[]) => void | Promise<void>;

interface Route {
  pattern: RegExp;
  methods: Partial<Record<string, Handler>>;
}

const ID = '([A-Za-z0-9-]{1,80})';
const UUID = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';

/** The exercise a path names (what the CLI accepts: 01, 1, the slug, the folder name), or a 404. */
async function findExercise(ctx: HubContext, name: string): Promise<Exercise> {
  const exercises = await ctx.exercises();
  let id: string;
  try {
    id = resolveExerciseId(name, exercises.map((x) => x.manifest.id));
  } catch (error) {
    throw new HttpError(404, error instanceof Error ? error.message : String(error));
  }
  return exercises.find((x) => x.manifest.id === id)!;
}

function progressOf(id: string) {
  return exerciseProgress(readProgress().progress, id);
}

function hintsHtml(ctx: HubContext, exercise: Exercise, shown: number): string[] {
  return exercise.manifest.hints.slice(0, shown).map((text) => ctx.markdown.render(text));
}

const home: Handler = async (ctx, _req, res) => {
  const exercises = await ctx.exercises();
  const { progress, warning } = readProgress();
  const html = homePage({
    exercises,
    progressOf: (id) => exerciseProgress(progress, id),
    next: nextExercise(exercises),
    decks: listDecks(),
    warning,
  });
  sendHtml(res, 200, html);
};

const exercise: Handler = async (ctx, _req, res, [name]) => {
  const found = await findExercise(ctx, name!);
  const { id } = found.manifest;
  if (name !== id) return redirect(res, `/exercises/${id}`);
  let brief: string;
  try {
    brief = ctx.markdown.render(readFileSync(path.join(found.dir, 'README.md'), 'utf8'));
  } catch {
    brief = `<p class="hp-warning">exercises/${id}/README.md could not be read.</p>`;
  }
  const progress = progressOf(id);
  const deck = listDecks().find((d) => d.id === id);
  // After a pass, what the reference's last stage reaches beyond the goal, as verify prints it.
  const further = progress.passed ? stretchStage(found.manifest) : undefined;
  const stretch = further !== undefined ? stretchText(found.manifest.stages[further - 1]!.targets, further, id.slice(0, 2)).trim() : undefined;
  const doctor = latestDoctorResult(id, ctx.resultsDir);
  sendHtml(res, 200, exercisePage({ exercise: found, briefHtml: brief, progress, hintsHtml: hintsHtml(ctx, found, progress.hintsShown), deck, stretch, doctor }));
};

/**
 * The solution view: the stages by name with what each changes, and solutions/<id>/README.md. Locked
 * (403, saying how to unlock it) until the progress file records a pass or the solution shown, as the
 * CLI's `solution` command is.
 */
const solutionPage: Handler = async (ctx, _req, res, [name]) => {
  const found = await findExercise(ctx, name!);
  const { id, stages } = found.manifest;
  if (name !== id) return redirect(res, `/exercises/${id}/solution`);
  const progress = progressOf(id);
  if (!solutionUnlocked(progress)) {
    const nn = id.slice(0, 2);
    throw new HttpError(403, `The solution of ${id} unlocks once your server passes (npm run workshop -- verify ${nn}), or once you have opened it with npm run workshop -- solution ${nn} --force.`);
  }
  let readme: string;
  try {
    readme = ctx.markdown.render(readFileSync(path.join(found.solutionsDir, 'README.md'), 'utf8'));
  } catch {
    readme = `<p class="hp-warning">solutions/${id}/README.md could not be read.</p>`;
  }
  const stageList = stages.map((stage, i) => ({ title: stage.title, changesHtml: ctx.markdown.renderInline(stage.changes), file: `solutions/${id}/${stage.file}`, number: i + 1 }));
  sendHtml(res, 200, solutionViewPage({ exercise: found, stages: stageList, readmeHtml: readme }));
};

const exerciseJson: Handler = async (ctx, _req, res, [name]) => {
  const found = await findExercise(ctx, name!);
  const { id, title, load, hints } = found.manifest;
  const progress = progressOf(id);
  sendJson(res, 200, {
    id,
    title,
    servers: choicesOf(found),
    demo: demoChoices(found),
    verify: verifyChoices(found),
    load: { path: load.path, connections: load.connections, warmupSeconds: load.warmupSeconds, durationSeconds: load.durationSeconds, ramp: Boolean(load.ramp) },
    hints: { shown: Math.min(progress.hintsShown, hints.length), total: hints.length },
    status: statusOf(progress).kind,
  });
};

/** Shows the next hint, as the CLI's `hint` command does: the count goes up by one, up to the last. */
const nextHint: Handler = async (ctx, req, res, [name]) => {
  const found = await findExercise(ctx, name!);
  await readJson(req);
  const { id, hints } = found.manifest;
  const shown = Math.min(progressOf(id).hintsShown + 1, hints.length);
  const updated = updateExercise(id, (p) => ({ ...p, hintsShown: shown }));
  sendJson(res, 200, {
    shown,
    total: hints.length,
    hints: hintsHtml(ctx, found, shown),
    statusText: hintsStatus(shown, hints.length),
    button: hintButton(shown, hints.length),
    exerciseStatus: statusOf(updated).text,
  });
};

const slidesIndex: Handler = (_ctx, _req, res) => sendHtml(res, 200, slidesIndexPage(listDecks()));

const deck: Handler = (_ctx, _req, res, [id]) => {
  let found;
  try {
    // Only ids of slides/*.md; an error names the file and the line.
    found = loadDeck(id!);
  } catch (error) {
    throw new HttpError(500, `a deck could not be rendered: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!found) {
    // A deck under an exercise's former id (former-ids.ts) moved with the exercise.
    const current = currentIdOf(id!);
    if (current && listDecks().some((d) => d.id === current)) return redirect(res, `/slides/${current}`);
    throw new HttpError(404, `no deck "${id}"; the decks are at /slides`);
  }
  sendHtml(res, 200, deckPage(id!, found, 'hub'));
};

const asset: Handler = (ctx, _req, res, [name]) => {
  const found = ctx.assets.get(name!);
  const bytes = found && readAsset(found);
  if (!found || !bytes) throw new HttpError(404, `no asset "${name}"`);
  send(res, 200, found.type, bytes, { 'cache-control': 'no-cache' });
};

const startRun: Handler = async (ctx, req, res) => {
  const body = await readJson(req);
  if (typeof body.exercise !== 'string' || body.exercise.trim() === '') throw new HttpError(400, '"exercise" must name an exercise: "01", "1" or its name');
  // An unknown exercise in a body is a bad request (400), not a missing page.
  const found = await findExercise(ctx, body.exercise).catch((error: unknown) => {
    throw error instanceof HttpError && error.status === 404 ? new HttpError(400, error.message) : error;
  });
  // The servers under load (the default, as the live runs), or the doctor on one server.
  const kind = body.kind ?? 'bench';
  let request: RunRequest;
  if (kind === 'bench') request = { kind, servers: parseServers(body.servers, found) };
  else if (kind === 'doctor') request = { kind, server: parseDoctorServer(body.server, found) };
  else throw new HttpError(400, '"kind" must be "bench" (servers under the load, judged) or "doctor" (the doctor on one server)');
  const run = ctx.runs.start(found, request);
  sendJson(res, 202, { id: run.id, events: `/api/runs/${run.id}/events`, run }, { location: `/api/runs/${run.id}` });
};

const activeRun: Handler = (ctx, _req, res) => sendJson(res, 200, { active: ctx.runs.active() ?? null });

const runSummary: Handler = (ctx, _req, res, [id]) => {
  const summary = ctx.runs.summary(id!);
  if (!summary) throw new HttpError(404, `no run ${id}`);
  sendJson(res, 200, summary);
};

const runEvents: Handler = (ctx, req, res, [id]) => ctx.runs.watch(id!, req, res);

const cancelRun: Handler = async (ctx, req, res, [id]) => {
  await readJson(req);
  const summary = ctx.runs.summary(id!);
  if (!summary) throw new HttpError(404, `no run ${id}`);
  if (!ctx.runs.cancel(id!, 'cancelled from a page')) throw new HttpError(409, `run ${id} is not running (it ${summary.state === 'cancelled' ? 'was cancelled' : summary.state})`);
  sendJson(res, 202, { id, cancelling: true });
};

const pageGet = (handler: Handler) => ({ GET: handler, HEAD: handler });

export const ROUTES: Route[] = [
  { pattern: /^\/$/, methods: pageGet(home) },
  { pattern: new RegExp(`^/exercises/${ID}$`), methods: pageGet(exercise) },
  { pattern: new RegExp(`^/exercises/${ID}/solution$`), methods: pageGet(solutionPage) },
  { pattern: /^\/slides$/, methods: pageGet(slidesIndex) },
  { pattern: new RegExp(`^/slides/${ID}$`), methods: pageGet(deck) },
  { pattern: /^\/assets\/([A-Za-z0-9][A-Za-z0-9._-]{0,80})$/, methods: pageGet(asset) },
  // Browsers ask for it on every page, the decks' included.
  { pattern: /^\/favicon\.ico$/, methods: pageGet((ctx, req, res) => asset(ctx, req, res, ['favicon.svg'])) },
  { pattern: new RegExp(`^/api/exercises/${ID}$`), methods: pageGet(exerciseJson) },
  { pattern: new RegExp(`^/api/exercises/${ID}/hints$`), methods: { POST: nextHint } },
  { pattern: /^\/api\/runs$/, methods: { GET: activeRun, POST: startRun } },
  { pattern: new RegExp(`^/api/runs/${UUID}$`), methods: { GET: runSummary } },
  { pattern: new RegExp(`^/api/runs/${UUID}/events$`), methods: { GET: runEvents } },
  { pattern: new RegExp(`^/api/runs/${UUID}/cancel$`), methods: { POST: cancelRun } },
];

/** The handler for a safe path, or the error to answer with. */
export function route(method: string, pathname: string): { handler: Handler; params: string[] } | HttpError {
  for (const r of ROUTES) {
    const match = r.pattern.exec(pathname);
    if (!match) continue;
    const handler = r.methods[method];
    const allowed = Object.keys(r.methods).join(', ');
    if (!handler) return new HttpError(405, `${method} is not allowed on ${pathname}; use ${allowed}`, {}, { allow: allowed });
    return { handler, params: match.slice(1) };
  }
  return new HttpError(404, `nothing at ${pathname}`);
}

/** JSON for the API and for clients that do not ask for HTML; a page for a browser. */
export function sendError(req: IncomingMessage, res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const wantsHtml = !(req.url ?? '').startsWith('/api/') && /text\/html/.test(req.headers.accept ?? '');
  if (error.status === 413) res.setHeader('connection', 'close');
  if (wantsHtml) {
    send(res, error.status, 'text/html; charset=utf-8', errorPage(error.status, error.message), error.headers);
  } else {
    sendJson(res, error.status, { error: error.message, ...error.extra }, error.headers);
  }
}
