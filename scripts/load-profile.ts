// What load a server is put under: the steady phase, or a ramp, and how servers of one verdict take turns.

/**
 * Turns of 1 s, at least 4 rounds: the fewest whose lowest and highest ratio cover the median with the
 * confidence the verdict wants (87.5% for 4, see stats.ts), then more while too close, up to 11.
 */
export const DEFAULT_TURNS = { seconds: 1, minRounds: 4, maxRounds: 11 };

/** autocannon's placeholder for an id of each request's own, in a load's path (LoadProfile.path). */
export const REQUEST_ID = '[<id>]';

/** The path of one request of the load, for a person to try: an example id where each request has its own. */
export function examplePath(load: Pick<LoadProfile, 'path'>): string {
  return load.path.replaceAll(REQUEST_ID, 'example-1');
}

export interface LoadProfile {
  /**
   * The path every request asks for. A `[<id>]` in it (autocannon's own placeholder, `-I` on its command
   * line) is a new id in each request: each answer can then be told apart and held to what it promised
   * (08: its own decision's event on the broker).
   */
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: string;
  headers?: Record<string, string>;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /**
   * Wait after the warm-up until the server's event loop is idle before measuring. autocannon abandons
   * the warm-up's requests still in flight, and a server whose requests take seconds keeps working on
   * them; without the wait the measured phase starts behind that backlog.
   */
  settleAfterWarmup?: boolean;
  /**
   * The steady load's offered rate in req/s over all connections (autocannon's overallRate); as fast as
   * the server answers when absent. The author check's known-wrong fixes use it: they are judged on what
   * they answer, and a load at full speed would only spend the cores they share.
   */
  rate?: number;
  /**
   * Measure with a ramp instead of a steady load: the offered rate climbs from `from` to `to` req/s in
   * `steps` equal steps of `stepSeconds` each (autocannon's rate limiting), and the harness finds the knee.
   * `connections` is then the most requests the load keeps open at once: past the knee, they queue.
   * The warm-up runs at `from` req/s.
   */
  ramp?: RampProfile;
  /**
   * After the measured phase, start a fresh copy of the server, warm it up the same way, and load the two
   * in turns, a second each, `pairs` times: throughputKept is the median ratio of each aged second to the
   * fresh copy's seconds on either side of it on the same machine (see fresh-copy.ts).
   */
  freshCopy?: { pairs: number };
  /**
   * How the servers of one verdict take turns (see steady-turns.ts): each is loaded for `seconds` in turn,
   * round after round; at least `minRounds` rounds, then more while a target is too close to call, up to
   * `maxRounds`. Defaults: DEFAULT_TURNS (1 s, 4 and 11 rounds). A server whose requests take seconds needs longer turns.
   * `connections` replaces load.connections for the warm-ups and turns (a ramp's queue limit is not a
   * steady load's). A shipped server whose bug grows with the requests it serves sets `brokenRounds`: it
   * takes that many turns and no more, so every run measures it at the same age, while the others go on
   * while a target is too close; one whose bug grows with time sets minRounds = maxRounds (see
   * docs/measuring.md). `false`: one server after another, each for durationSeconds, for a bug that needs
   * sustained load to show (a backlog that drains between turns).
   */
  turns?: { seconds?: number; minRounds?: number; maxRounds?: number; brokenRounds?: number; connections?: number } | false;
}

export interface RampProfile {
  from: number;
  to: number;
  steps: number;
  stepSeconds: number;
}

/** Every problem with a load profile, in words; empty when it is sound. */
export function loadProblems(load: LoadProfile): string[] {
  const problems: string[] = [];
  if (!load.path.startsWith('/')) problems.push(`load.path "${load.path}" must start with /`);
  const { connections, warmupSeconds, durationSeconds } = load;
  if (!(Number.isInteger(connections) && connections > 0)) problems.push('load.connections must be a positive integer');
  if (!(warmupSeconds >= 0)) problems.push('load.warmupSeconds must be 0 or more');
  if (!(durationSeconds > 0 && durationSeconds <= 600)) problems.push('load.durationSeconds must be between 0 and 600: every run is bounded');
  if (load.rate !== undefined && !(load.rate > 0)) problems.push('load.rate must be a positive number of req/s');
  const ramp = load.ramp;
  if (ramp) {
    if (!(ramp.from >= 1 && ramp.to > ramp.from)) problems.push('load.ramp: from must be at least 1 req/s and to above it');
    if (!(Number.isInteger(ramp.steps) && ramp.steps >= 2)) problems.push('load.ramp: steps must be a whole number, 2 or more');
    if (!(ramp.stepSeconds >= 1 && ramp.steps * ramp.stepSeconds <= 600)) problems.push('load.ramp: stepSeconds must be 1 or more, the whole ramp 600 s at most');
  }
  const turns = load.turns;
  if (turns !== undefined && turns !== false) {
    const { seconds = DEFAULT_TURNS.seconds, minRounds = DEFAULT_TURNS.minRounds, maxRounds = DEFAULT_TURNS.maxRounds } = turns;
    if (!(seconds >= 0.5 && seconds <= 30)) problems.push('load.turns.seconds must be between 0.5 and 30');
    if (!(Number.isInteger(minRounds) && minRounds >= 3)) problems.push('load.turns.minRounds must be a whole number, 3 or more');
    if (!(Number.isInteger(maxRounds) && maxRounds >= minRounds && maxRounds <= 30)) problems.push('load.turns.maxRounds must be a whole number from minRounds to 30');
    const { brokenRounds = maxRounds } = turns;
    if (!(Number.isInteger(brokenRounds) && brokenRounds >= minRounds && brokenRounds <= maxRounds)) problems.push('load.turns.brokenRounds must be a whole number from minRounds to maxRounds');
  }
  const fresh = load.freshCopy;
  if (fresh && !(Number.isInteger(fresh.pairs) && fresh.pairs >= 2 && fresh.pairs <= 30)) problems.push('load.freshCopy.pairs must be a whole number from 2 to 30');
  return problems;
}
