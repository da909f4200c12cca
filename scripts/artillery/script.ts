// An exercise's load as an Artillery test script (https://www.artillery.io/docs/reference/test-script):
// the same requests, and the load model mapped as closely as Artillery's allows. Only builds values and
// text; writing the files is export-load's.
import { REQUEST_ID } from '../load-profile.ts';
import type { LoadProfile, RampProfile } from '../manifest.ts';
import { stepRates } from '../ramp.ts';

/** The file beside every exported script that holds the functions its flow names (hotpath-load.cjs). */
export const PROCESSOR_FILE = 'hotpath-load.cjs';
export const PROCESSOR_SOURCE = new URL('./hotpath-load.cjs', import.meta.url);

/** Phase names in the report (`hotpath.<phase>.codes.<status>`): the steady load's two, and after the last. */
export const WARMUP_NAME = 'warm-up';
export const MEASURED_NAME = 'measured';
export const AFTER_NAME = 'after';

/** The seconds over which the closed model's virtual users arrive, one per connection. */
export const CONNECT_SECONDS = 1;

/** autocannon's timeout in the harness: an answer later than this counts as a timeout. */
const TIMEOUT_SECONDS = 10;

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

export interface ArtilleryRequest {
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** A function of the processor run before the request is sent (hotpathRequestId). */
  beforeRequest?: string;
}

export type FlowStep =
  | { function: string }
  | { loop: FlowStep[]; whileTrue: string }
  | { [method in HttpMethod]?: ArtilleryRequest };

export interface ArtilleryPhase {
  name: string;
  duration: number;
  arrivalCount?: number;
  arrivalRate?: number;
  maxVusers?: number;
}

export interface ArtilleryScript {
  config: {
    target: string;
    processor: string;
    http: { timeout: number; pool?: number };
    phases: ArtilleryPhase[];
    variables: Record<string, number | string>;
  };
  scenarios: Array<{ name: string; afterResponse: string; onError: string; flow: FlowStep[] }>;
}

/** A phase as the report names it (`hotpath.<name>.*`), with its seconds and offered rate. */
export interface ExportedPhase {
  name: string;
  seconds: number;
  /** Arrivals per second; absent in the closed model, which has none once connected. */
  offered?: number;
  /** Not measured: the warm-up. */
  warmup: boolean;
}

export interface ExportedLoad {
  script: ArtilleryScript;
  /** 'closed': N users, each sending its next request when its answer arrives (autocannon's connections). 'open': arrivals per second. */
  model: 'closed' | 'open';
  /** The phases the report gives figures for, in order (the closed model: warm-up, then measured). */
  phases: ExportedPhase[];
  /** Where the two models differ for this load, in sentences, for the script's comments and the docs. */
  differences: string[];
  /** The script's seconds from its first arrival to its last phase's end. */
  seconds: number;
}

export interface ExportOptions {
  /** The server's base URL (scheme, host, port), e.g. http://127.0.0.1:3000. */
  target: string;
  /** A ramp instead of the steady load: the offered rate climbing step by step. */
  ramp?: RampProfile;
  /** Names the scenario (the exercise's id, or the config's file). */
  name: string;
}

/** The exercise's load (or a ramp of it) as an Artillery script, with where the models differ. */
export function exportLoad(load: LoadProfile, options: ExportOptions): ExportedLoad {
  const offered = options.ramp ?? (load.rate !== undefined ? { rate: load.rate } : undefined);
  return offered === undefined ? closedModel(load, options) : openModel(load, options, offered);
}

function request(load: LoadProfile): FlowStep {
  const method = (load.method ?? 'GET').toLowerCase() as HttpMethod;
  const spec: ArtilleryRequest = { url: load.path };
  // A new id in each request where the path says [<id>], as autocannon's -I puts one (hotpath-load.cjs).
  if (load.path.includes(REQUEST_ID)) spec.beforeRequest = 'hotpathRequestId';
  if (load.headers && Object.keys(load.headers).length > 0) spec.headers = { ...load.headers };
  if (load.body !== undefined) spec.body = load.body;
  return { [method]: spec };
}

/** hotpath-load.cjs's schedule: each phase's name and seconds, in order ("warm-up=2; measured=5"). */
export function scheduleText(phases: ExportedPhase[]): string {
  return phases.map((p) => `${p.name}=${p.seconds}`).join('; ');
}

function script(target: string, name: string, phases: ArtilleryPhase[], variables: ArtilleryScript['config']['variables'], flow: FlowStep[], pool?: number): ArtilleryScript {
  return {
    config: {
      target,
      processor: `./${PROCESSOR_FILE}`,
      http: { timeout: TIMEOUT_SECONDS, ...(pool !== undefined ? { pool } : {}) },
      phases,
      variables,
    },
    // Every answer is recorded under the phase it arrived in (hotpath.<phase>.*), apart from Artillery's
    // own figures, which cover the whole run, warm-up included.
    scenarios: [{ name, afterResponse: 'hotpathRecord', onError: 'hotpathError', flow: [{ function: 'hotpathStart' }, ...flow] }],
  };
}

const RESPONSE_TIME =
  "Artillery's clock counts whole milliseconds (autocannon's, fractions): a server that answers in a millisecond or two reads 1, 2 or 3 ms in every percentile, only the mean keeps the fraction.";

/**
 * autocannon's model: `connections` connections, each sending its next request when its answer arrives,
 * for the warm-up and then the measured seconds. In Artillery: one virtual user per connection (each
 * keeps its own keep-alive connection), all arriving in the first second, each looping on the request
 * until the worker's clock passes the measured window.
 */
function closedModel(load: LoadProfile, { target, name }: ExportOptions): ExportedLoad {
  const phases: ExportedPhase[] = [
    { name: WARMUP_NAME, seconds: CONNECT_SECONDS + load.warmupSeconds, warmup: true },
    { name: MEASURED_NAME, seconds: load.durationSeconds, warmup: false },
  ];
  const differences = [
    `autocannon opens its ${load.connections} connections at once; here one virtual user per connection arrives over the first ` +
      `${CONNECT_SECONDS} s, which the warm-up (${load.warmupSeconds} s in the workshop) is lengthened by.`,
    'A virtual user sends its next request when its answer arrives, as an autocannon connection does; Artillery has no loop ' +
      'bounded by time, so the loop ends on a clock that hotpath-load.cjs keeps, one per worker.',
    "Answers are counted in the phase they arrive in (hotpath.<phase>.* in the report), as the workshop counts them; Artillery's " +
      'own figures (http.*) cover the whole run, warm-up included. The requests still out at the end are answered and recorded under "after"; autocannon drops them.',
    RESPONSE_TIME,
    'A request that fails (no answer) ends its virtual user: one connection fewer, where autocannon reconnects. A run with errors fails in the workshop either way.',
    'Distributed (run-fargate or run-lambda with --count N), every worker runs the whole script: N times the connections.',
  ];
  if (load.settleAfterWarmup) {
    differences.push(
      "The harness waits after the warm-up until the server's event loop is idle, because autocannon abandons the warm-up's " +
        'requests in flight; here no request is abandoned (each user waits for its answer), and nothing waits for the server.',
    );
  }
  const variables = { hotpathSchedule: scheduleText(phases), hotpathLeadMs: round((CONNECT_SECONDS * 1000) / load.connections) };
  const flow: FlowStep[] = [{ loop: [request(load)], whileTrue: 'hotpathRunning' }];
  return {
    script: script(target, name, [{ name: 'connect', duration: CONNECT_SECONDS, arrivalCount: load.connections }], variables, flow),
    model: 'closed',
    phases,
    differences,
    seconds: phases.reduce((sum, p) => sum + p.seconds, 0),
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The report's name for a ramp step: its number and its offered rate ("step-3-120rps"). */
export function stepName(index: number, rate: number): string {
  return `step-${index + 1}-${rate}rps`;
}

/**
 * A ramp, or a steady load at a fixed rate: Artillery's own model, arrivals per second, one request per
 * virtual user. The warm-up arrives at the first rate; the steps follow, each for its seconds. At most
 * `connections` users are in flight (maxVusers, beyond which arrivals are skipped), over a pool of as
 * many keep-alive connections.
 */
function openModel(load: LoadProfile, { target, name }: ExportOptions, offered: RampProfile | { rate: number }): ExportedLoad {
  const phases: ExportedPhase[] = [];
  const rates = 'rate' in offered ? [offered.rate] : stepRates(offered);
  if (load.warmupSeconds > 0) phases.push({ name: WARMUP_NAME, seconds: load.warmupSeconds, offered: rates[0]!, warmup: true });
  if ('rate' in offered) phases.push({ name: MEASURED_NAME, seconds: load.durationSeconds, offered: offered.rate, warmup: false });
  else rates.forEach((rate, i) => phases.push({ name: stepName(i, rate), seconds: offered.stepSeconds, offered: rate, warmup: false }));
  const differences = [
    'autocannon spreads a rate over a fixed set of connections; Artillery starts one virtual user per arrival, ' +
      `each sending one request, over a shared pool of ${load.connections} keep-alive connections.`,
    `Past the knee autocannon's connections hold the requests the server has not answered; here at most ${load.connections} ` +
      'users are in flight (maxVusers) and further arrivals are skipped (vusers.skipped in the report).',
    "Answers are counted in the phase they arrive in (hotpath.<phase>.* in the report), as the workshop counts them; Artillery's " +
      'own figures (http.*) cover the whole run. The answers after the last phase are recorded under "after".',
    RESPONSE_TIME,
    'Artillery keeps its pool of connections for the whole run; the harness opens new ones for every step, so that no request outlives ' +
      'its step. Past the knee a request can wait here through several steps, up to the 10 s timeout.',
    "Artillery's arrival timer (nanotimer) spins through the last 25 ms before each arrival: from 40 arrivals a second up, it keeps a core busy. On a 2-core machine that is half of it.",
    'Distributed (run-fargate or run-lambda with --count N), every worker runs the whole script: N times the rates.',
  ];
  if (!('rate' in offered)) {
    differences.push(
      "The harness's ramp (run --ramp) climbs in half steps and then settles to place the knee; this script runs each declared step once, in order, to the last.",
    );
  }
  const variables = { hotpathSchedule: scheduleText(phases), hotpathLeadMs: round(1000 / phases[0]!.offered!) };
  return {
    script: script(
      target,
      name,
      phases.map((p) => ({ name: p.name, duration: p.seconds, arrivalRate: p.offered!, maxVusers: load.connections })),
      variables,
      [request(load)],
      load.connections,
    ),
    model: 'open',
    phases,
    differences,
    seconds: phases.reduce((sum, p) => sum + p.seconds, 0),
  };
}

/**
 * YAML for the script: the subset it needs (maps, lists, numbers, strings), strings in JSON's quoting
 * (valid YAML), with the comment lines on top.
 */
export function toYaml(value: unknown, comments: string[] = []): string {
  const lines = comments.map((line) => (line ? `# ${line}` : '#'));
  lines.push(...yamlLines(value, 0));
  return `${lines.join('\n')}\n`;
}

function scalar(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(String(value));
}

function isBlock(value: unknown): value is object {
  return typeof value === 'object' && value !== null && (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0);
}

function yamlLines(value: unknown, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (!isBlock(item)) return [`${pad}- ${scalar(item)}`];
      // The item's first line goes after the dash; the rest keep its indentation.
      const [first, ...rest] = yamlLines(item, indent + 2);
      return [`${pad}- ${first!.trimStart()}`, ...rest];
    });
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => {
      const name = /^[A-Za-z_][\w-]*$/.test(key) ? key : JSON.stringify(key);
      if (!isBlock(item)) return [`${pad}${name}: ${Array.isArray(item) ? '[]' : typeof item === 'object' && item !== null ? '{}' : scalar(item)}`];
      return [`${pad}${name}:`, ...yamlLines(item, indent + 2)];
    });
  }
  return [`${pad}${scalar(value)}`];
}
