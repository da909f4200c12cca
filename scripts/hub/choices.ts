// The servers a live run may ask for, from a fixed vocabulary checked against the exercise's manifest:
// 'broken', 'mine', 'ceiling' and stage numbers. Never a path or a command: the files come from specFor.
import { specFor, type ServerChoice } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { HttpError } from './http.ts';

/** The most servers one run may have: broken, every stage, mine and the ceiling of the largest exercise. */
const MAX_SERVERS = 12;

export interface ChoiceInfo {
  server: ServerChoice;
  label: string;
  title: string;
}

/** Every server of the exercise a page can offer, in the order of the buttons. */
export function choicesOf(exercise: Exercise): ChoiceInfo[] {
  const all: ServerChoice[] = ['broken', ...exercise.manifest.stages.map((_, i) => i + 1), 'mine', ...(exercise.ceilingFile ? ['ceiling' as const] : [])];
  return all.map((server) => {
    const { label, title } = specFor(exercise, server).run;
    return { server, label, title };
  });
}

/** Checks a request's `servers` against the exercise; a 400 names what is wrong and what is offered. */
export function parseServers(value: unknown, exercise: Exercise): ServerChoice[] {
  const offered = choicesOf(exercise).map((c) => c.server);
  const words = offered.map((s) => JSON.stringify(s)).join(', ');
  if (!Array.isArray(value) || value.length === 0) throw new HttpError(400, `"servers" must be a non-empty array of: ${words}`);
  if (value.length > MAX_SERVERS) throw new HttpError(400, `"servers" lists ${value.length} servers; at most ${MAX_SERVERS}`);
  const servers: ServerChoice[] = [];
  for (const item of value) {
    // A stage may come as 1 or "1"; anything else must be one of the words.
    const choice = typeof item === 'string' && /^\d{1,2}$/.test(item) ? Number(item) : item;
    if (!offered.includes(choice as ServerChoice)) {
      const shown = typeof item === 'string' ? JSON.stringify(item.slice(0, 40)) : typeof item === 'number' ? String(item) : typeof item;
      throw new HttpError(400, `unknown server ${shown} for exercise ${exercise.manifest.id}; servers: ${words}`);
    }
    if (servers.includes(choice as ServerChoice)) throw new HttpError(400, `server ${JSON.stringify(choice)} is listed twice`);
    servers.push(choice as ServerChoice);
  }
  return servers;
}

/**
 * The servers the hub's doctor runs on: your server.ts first (the default), the shipped server, and the
 * ceiling where there is one. Not a stage: its file's name names its fix (the CLI's `doctor NN --stage N`
 * does it, once asked).
 */
export function doctorChoicesOf(exercise: Exercise): ChoiceInfo[] {
  const all = choicesOf(exercise);
  return (['mine', 'broken', 'ceiling'] as const).flatMap((server) => all.filter((c) => c.server === server));
}

/** Checks a doctor request's `server` (default "mine"); a 400 names what is offered. */
export function parseDoctorServer(value: unknown, exercise: Exercise): ServerChoice {
  if (value === undefined) return 'mine';
  const offered = doctorChoicesOf(exercise).map((c) => c.server);
  if (typeof value === 'string' && (offered as unknown[]).includes(value)) return value as ServerChoice;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value === 'number' ? String(value) : typeof value;
  const nn = exercise.manifest.id.slice(0, 2);
  throw new HttpError(
    400,
    `the doctor runs here on ${offered.map((s) => JSON.stringify(s)).join(', ')}, not on ${shown}` +
      (typeof value === 'number' || /^\d+$/.test(String(value)) ? ` (a stage: npm run workshop -- doctor ${nn} --stage ${String(value).slice(0, 2)} in a terminal)` : ''),
  );
}
