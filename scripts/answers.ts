// What the load receives, checked: a steady sample of the answers autocannon gets under load (status,
// headers, body), held to the exercise's contract after the phase, so that a server that answers the
// probe well and the load badly (a memoized body, a smaller one, an error sent with 200) fails.
import type { AnswerContract, AnswerSample, ExerciseManifest } from './manifest.ts';
import type { AnswerCheck, Role } from './result.ts';
import { ServiceContexts } from './service.ts';

/**
 * Two answers kept every this many milliseconds per server, the first to arrive and the next: about 40 a
 * second, whatever its speed. The pair shows what a server shares between answers for less than this.
 */
export const SAMPLE_EVERY_MS = 50;
/** At most this many answers kept per server (a long soak does not grow the harness's memory). */
const MAX_SAMPLES = 2_000;

export class AnswerSampler {
  readonly samples: AnswerSample[] = [];
  private next = 0;
  /** The next answer completes the pair. */
  private pairing = false;
  /** The sample kept last, until its response time arrives. */
  private timing: AnswerSample | undefined;
  /** Every 2xx answer's key, when the contract reads one from each (`everyAnswer`). */
  private readonly keys = new Set<string>();
  private keyedAnswers = 0;
  private repeatedKeys = 0;
  private repeatedExample: string | undefined;

  constructor(private readonly everyAnswer?: AnswerContract['everyAnswer']) {}

  /** autocannon's onResponse: keys every answer, keeps the answer when its turn has come. */
  readonly onResponse = (status: number, body: string, context: { id?: string }, headers: Record<string, string | string[] | undefined> | undefined): void => {
    if (this.everyAnswer && status >= 200 && status < 300) this.keyAnswer(body);
    const now = Date.now();
    const follows = this.pairing;
    if ((!follows && now < this.next) || this.samples.length >= MAX_SAMPLES) return;
    if (!follows) this.next = now + SAMPLE_EVERY_MS;
    this.pairing = !follows;
    this.timing = { status, headers: lowerCased(headers ?? {}), body, receivedAt: now, ...(context.id !== undefined ? { id: context.id } : {}), ...(follows ? { follows } : {}) };
    this.samples.push(this.timing);
  };

  private keyAnswer(body: string): void {
    let key: string | undefined;
    try {
      key = this.everyAnswer!.key(body);
    } catch {
      key = undefined;
    }
    if (key === undefined) return;
    this.keyedAnswers += 1;
    if (this.keys.has(key)) {
      this.repeatedKeys += 1;
      this.repeatedExample ??= key;
    } else this.keys.add(key);
  }

  /** What the keys of every answer showed, when the contract reads one. */
  keyed(): AnswerCheck['keyed'] {
    if (!this.everyAnswer) return undefined;
    return { what: this.everyAnswer.what, answers: this.keyedAnswers, repeated: this.repeatedKeys, ...(this.repeatedExample !== undefined ? { example: this.repeatedExample } : {}) };
  }

  /**
   * autocannon's 'response' event, which follows each onResponse at once, for the same answer: its
   * response time dates the request of the sample just kept.
   */
  readonly onTimed = (_client: unknown, _status: number, _bytes: number, responseTime: number): void => {
    if (!this.timing) return;
    this.timing.sentAt = this.timing.receivedAt - responseTime;
    this.timing = undefined;
  };
}

function lowerCased(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** Whether an answer came sooner than `ms` after its request went out (no when that moment is unknown). */
export function answeredWithin(answer: AnswerSample, ms: number): boolean {
  return answer.sentAt !== undefined && answer.receivedAt - answer.sentAt < ms;
}

/** The contract a server's answers are held to: the ceiling's own when it serves the payload without the extras. */
export function contractFor(manifest: ExerciseManifest, role: Role): AnswerContract {
  return role === 'ceiling' ? (manifest.ceilingContract ?? manifest.contract) : manifest.contract;
}

/**
 * Holds every sampled answer to the contract, with the server's own services (none: a contract that reads
 * them has nothing to compare); a repeated distinct key counts as one broken answer each, and so does a
 * repeated `changes` value when most of them repeat.
 */
export function checkAnswers(
  contract: AnswerContract,
  samples: readonly AnswerSample[],
  services: ServiceContexts = new ServiceContexts(),
  keyed?: AnswerCheck['keyed'],
): AnswerCheck {
  const counts = new Map<string, { count: number; example: string }>();
  const note = (problem: string, example: string) => {
    const seen = counts.get(problem);
    if (seen) seen.count += 1;
    else counts.set(problem, { count: 1, example });
  };
  const keys = new Set<string>();
  const stale = staleAnswers(contract, samples);
  const sharedInPairs = sharedAcrossPairs(contract, samples);
  const unrandom = repeatedRandom(contract, samples);
  let broken = 0;
  for (const [index, sample] of samples.entries()) {
    let problems: string[];
    let key: string | undefined;
    try {
      problems = contract.check(sample, { services });
      key = contract.distinct?.(sample);
    } catch (error) {
      problems = [`the contract could not read it (${error instanceof Error ? error.message : String(error)})`];
    }
    if (key !== undefined) {
      if (keys.has(key)) problems = [...problems, `${contract.distinctWhat ?? 'its data'} repeats an earlier answer's`];
      keys.add(key);
    }
    if (stale.has(index)) problems = [...problems, `${contract.changes!.what} stays the same from answer to answer`];
    if (sharedInPairs.has(index)) problems = [...problems, `${contract.changes!.what} is the one the answer just before it had, though the data differ`];
    if (unrandom.get(index) === 'positions') problems = [...problems, `${contract.random!.what} agrees with an earlier answer's in over a quarter of its positions`];
    if (unrandom.get(index) === 'run') problems = [...problems, `${contract.random!.what} holds a run of ${RUN_CHARS} characters or more of an earlier answer's, shifted`];
    if (problems.length > 0) broken += 1;
    for (const problem of problems) note(problem, excerpt(sample));
  }
  return {
    sampled: samples.length,
    broken,
    problems: [...counts.entries()].map(([problem, { count, example }]) => ({ problem, count, example })).sort((a, b) => b.count - a.count),
    ...(keyed ? { keyed } : {}),
  };
}

/**
 * Repeats of every answer's key allowed, as a share of the answers: random keys may meet by chance (03's
 * seeds are drawn from 2^32), and a shortcut that repeats fewer answers than this saves next to nothing.
 */
const REPEATS_ALLOWED = 0.01;

/** The problem of a load whose answers repeat each other's keys past the allowance; none otherwise. */
export function keyedProblem(keyed: AnswerCheck['keyed']): string | undefined {
  if (!keyed || keyed.repeated <= keyed.answers * REPEATS_ALLOWED) return undefined;
  return (
    `under load: ${keyed.repeated.toLocaleString('en-US')} of ${keyed.answers.toLocaleString('en-US')} answers (every one, not only the sampled) repeat an earlier answer's ${keyed.what}` +
    ` (e.g. ${JSON.stringify(keyed.example)}): answers copied from others', not made for their own request`
  );
}

/** How many of the samples before it each random value is compared with, and at how many positions. */
const RANDOM_AGAINST = 40;
const RANDOM_POSITIONS = 500;
/**
 * Every sampled random value is cut into pieces of CHUNK characters, and every window of that length in a
 * later value is looked up among them: a run shared with any earlier sample, at any offset, of at least
 * RUN_CHARS (2 CHUNK - 1: it then holds a whole piece) is found. Two random hex strings share one by chance
 * about once in 10^19 lookups.
 */
const CHUNK = 16;
const RUN_CHARS = 2 * CHUNK - 1;

/**
 * The samples whose random value agrees with one of the RANDOM_AGAINST before it in more than a quarter of
 * RANDOM_POSITIONS positions spread over it ('positions': two random hex strings agree in a sixteenth, ±1%
 * over 500, and data kept in part from an earlier answer agrees where it was kept), or holds a run of an
 * earlier sample's at another offset ('run': windows of one pool of random bytes, drawn once).
 */
function repeatedRandom(contract: AnswerContract, samples: readonly AnswerSample[]): Map<number, 'positions' | 'run'> {
  const repeated = new Map<number, 'positions' | 'run'>();
  if (!contract.random) return repeated;
  const earlier: string[] = [];
  const pieces = new Set<string>();
  samples.forEach((sample, index) => {
    let value: string | undefined;
    try {
      value = contract.random!.value(sample);
    } catch {
      value = undefined;
    }
    if (!value) return;
    const step = Math.max(1, Math.floor(value.length / RANDOM_POSITIONS));
    const agrees = (other: string) => {
      let same = 0;
      let compared = 0;
      for (let i = 0; i < value.length; i += step, compared++) if (value[i] === other[i]) same++;
      return same > compared / 4;
    };
    if (earlier.some(agrees)) repeated.set(index, 'positions');
    else if (sharesARun(value, pieces)) repeated.set(index, 'run');
    earlier.push(value);
    if (earlier.length > RANDOM_AGAINST) earlier.shift();
    for (let i = 0; i + CHUNK <= value.length; i += CHUNK) pieces.add(value.slice(i, i + CHUNK));
  });
  return repeated;
}

function sharesARun(value: string, pieces: Set<string>): boolean {
  if (pieces.size === 0) return false;
  for (let i = 0; i + CHUNK <= value.length; i++) if (pieces.has(value.slice(i, i + CHUNK))) return true;
  return false;
}

/** Fewer samples than this say nothing of whether a value changes. */
const CHANGES_FROM = 10;

/**
 * The samples whose `changes` value repeats an earlier sample's, when fewer than half of the values
 * differ (none otherwise: a value that changes may still repeat now and then).
 */
function staleAnswers(contract: AnswerContract, samples: readonly AnswerSample[]): Set<number> {
  const stale = new Set<number>();
  if (!contract.changes) return stale;
  const seen = new Set<string>();
  let valued = 0;
  samples.forEach((sample, index) => {
    // The steady samples only: answers served at the same moment may share a value that still changes.
    if (sample.follows) return;
    let value: string | undefined;
    try {
      value = contract.changes!.value(sample);
    } catch {
      value = undefined;
    }
    if (value === undefined) return;
    valued += 1;
    if (seen.has(value)) stale.add(index);
    seen.add(value);
  });
  return valued >= CHANGES_FROM && seen.size < valued / 2 ? stale : new Set();
}

/**
 * Past this share of the pairs (a steady sample and the answer after it) whose data differ, a `changes`
 * value the two share breaks the contract: answers served together may share one now and then, a value
 * kept over many answers shares it in most pairs.
 */
const SHARED_IN_PAIRS = 1 / 3;

/**
 * The second answers of the pairs that share their `changes` value though their data differ (`distinct`),
 * when more than SHARED_IN_PAIRS of the pairs do (none otherwise). The steady samples, tens of
 * milliseconds apart, cannot see a value refreshed more often than that; two answers in a row can.
 */
function sharedAcrossPairs(contract: AnswerContract, samples: readonly AnswerSample[]): Set<number> {
  const shared = new Set<number>();
  if (!contract.changes || !contract.distinct) return shared;
  const read = (pick: (answer: AnswerSample) => string | undefined, sample: AnswerSample) => {
    try {
      return pick(sample);
    } catch {
      return undefined;
    }
  };
  let pairs = 0;
  samples.forEach((sample, index) => {
    const before = samples[index - 1];
    if (!sample.follows || !before) return;
    const [key, keyBefore] = [read(contract.distinct!, sample), read(contract.distinct!, before)];
    const [value, valueBefore] = [read(contract.changes!.value, sample), read(contract.changes!.value, before)];
    if (key === undefined || keyBefore === undefined || key === keyBefore || value === undefined || valueBefore === undefined) return;
    pairs += 1;
    if (value === valueBefore) shared.add(index);
  });
  return pairs >= CHANGES_FROM && shared.size > pairs * SHARED_IN_PAIRS ? shared : new Set();
}

function excerpt(sample: AnswerSample): string {
  const type = sample.headers['content-type'] ?? 'no Content-Type';
  const body = sample.body.length > 80 ? `${sample.body.slice(0, 80)}… (${sample.body.length} chars)` : sample.body;
  return `${sample.status} ${type} ${JSON.stringify(body)}`;
}

/** The problems a check of answers under load gives the server's verdict, with counts. */
export function answerProblems(check: AnswerCheck | undefined): string[] {
  if (!check) return [];
  if (check.sampled === 0) return ['under load: no answer could be sampled'];
  const keyed = keyedProblem(check.keyed);
  return [...check.problems.map((p) => `under load: ${p.count} of ${check.sampled} sampled answers: ${p.problem} (e.g. ${p.example})`), ...(keyed ? [keyed] : [])];
}
