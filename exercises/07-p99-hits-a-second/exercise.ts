import { setTimeout as sleep } from 'node:timers/promises';
import { Expectations, fetchResponse, type CheckResult } from '../../scripts/check.ts';
import { defineExercise, type AfterLoadContext, type AnswerContract, type CheckContext } from '../../scripts/manifest.ts';
import { statsdService, waitForLines, type StatsdContext, type StatsdCounts, type StatsdShapes } from '../../scripts/services/statsd.ts';
import { latencyP99 } from '../../scripts/metrics/latency-p99.ts';
import { pendingLookups } from '../../scripts/metrics/pending-lookups.ts';
import { assign, REGISTRY, type Experiment } from './experiments.ts';

const EXPERIMENT = 'checkout-button';
const EXPERIMENT_PATH = `/experiments/${EXPERIMENT}`;
/** The four metrics every decision sends, by the name the sink counts them under (prefix included). */
const METRICS = ['decisions.registry_ms', 'decisions.requests', 'decisions.assigned', 'decisions.latency_ms'];
/** Users the probe asks about: with the 50/50 split, both variants come up among them. */
const PROBE_USERS = ['u-1001', 'u-1002', 'u-1003', 'u-1004', 'u-1005', 'u-1006'];
/** Users asked about after the probe ramps the experiment to one variant. */
const RAMP_USERS = ['u-2001', 'u-2002'];
/** Decisions the correctness probe asks for; the after-load count allows for them. */
const PROBE_REQUESTS = PROBE_USERS.length + RAMP_USERS.length;

const decideUrl = (baseUrl: string, user: string) => `${baseUrl}/decide?experiment=${EXPERIMENT}&user=${user}`;
const n = (value: number) => value.toLocaleString('en-US');

/** What a client relies on in every answer of /decide, the probe's and the load's alike: 200, and JSON that says so. */
function answerProblems(status: number, contentType: string | null, json: unknown): string[] {
  const problems: string[] = [];
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (!/^application\/json\b/.test(contentType ?? '')) problems.push(`Content-Type ${JSON.stringify(contentType)}, not application/json`);
  if (json === undefined) problems.push('the body is not JSON');
  return problems;
}

/** The decision itself: the experiment, the user asked about, and the variant the allocation gives that user. */
function decisionProblems(json: unknown, user: string, variant: string): string[] {
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  return body.experiment === EXPERIMENT && body.user === user && body.variant === variant
    ? []
    : [`not the decision {experiment: "${EXPERIMENT}", user: "${user}", variant: "${variant}"}`];
}

/** Asks for one decision and checks it against the registry's current allocation. */
async function expectDecision(expect: Expectations, baseUrl: string, user: string, experiment: Experiment, what: string): Promise<string> {
  const response = await fetchResponse(decideUrl(baseUrl, user));
  const got = `got ${response.status} ${response.headers.get('content-type') ?? 'no Content-Type'}: ${response.text.slice(0, 120)}`;
  const answer = answerProblems(response.status, response.headers.get('content-type'), response.json);
  expect.expect(answer.length === 0, `GET /decide answers 200 with JSON (${user})`, `${answer.join('; ')}: ${got}`);
  const decision = decisionProblems(response.json, user, assign(experiment, user));
  expect.expect(decision.length === 0, what, `${decision.join('; ')} for ${user}: ${got}`);
  return assign(experiment, user);
}

/** The user the load asks about, and the variant the registry's allocation (as the workshop starts it) gives them. */
const LOAD_USER = 'u-42';
const REGISTERED = REGISTRY[EXPERIMENT_PATH]!;
const LOAD_VARIANT = assign(REGISTERED, LOAD_USER);
/** The same experiment ramped all the way to the variant the load's user does not get: the registry switches between the two under load. */
const SWITCHED: Experiment = { name: EXPERIMENT, variants: REGISTERED.variants.map((v) => ({ ...v, weight: v.name === LOAD_VARIANT ? 0 : 100 / (REGISTERED.variants.length - 1) })) };
/**
 * How often the registry switches the allocation under load: seldom enough that most answers' windows (from
 * STALE_AFTER_MS before the request to the answer) fall between two switches, even where a crowded load
 * generator reads 100-200 ms of latency (the solution's README).
 */
const SWITCH_EVERY_MS = 500;
/**
 * How long before its request went out an answer's allocation may have been replaced. An honest server asks
 * the registry after the request arrives, so none at all; this is room for the clock's milliseconds.
 */
const STALE_AFTER_MS = 50;
/**
 * One registry answer in CANARY_EVERY (none while the probe holds the registry still) is an allocation of
 * its own, served once: all of the experiment to a new variant named for it (canary-1, canary-2, ...). The
 * decision that asked for it gives that variant and tags it; no other can.
 */
const CANARY_EVERY = 100;
/** A canary's allocation: the experiment's variants at 0%, all of it to one of its own ("{canary}" is its name). */
const CANARY: Experiment = { name: EXPERIMENT, variants: [...REGISTERED.variants.map((v) => ({ ...v, weight: 0 })), { name: '{canary}', weight: 100 }] };
const CANARIES_AT_MOST = 400;
const isCanary = (variant: unknown): variant is string => typeof variant === 'string' && /^canary-\d+$/.test(variant);
/** Canaries that may go untraced (one asked for as a run stops, say) before a run is held to be answering from other requests. */
const CANARIES_ASTRAY_SHARE = 0.02;

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Every answer is a decision for the load's user, with the variant of an allocation the registry served
 * while its request was out: the registry switches it every SWITCH_EVERY_MS, so a kept decision shows.
 */
const contract: AnswerContract = {
  check: (answer, { services }) => {
    const json = parsed(answer.body);
    const problems = answerProblems(answer.status, answer.headers['content-type'] ?? null, json);
    if (json === undefined) return problems;
    const variant = (json as Record<string, unknown>).variant;
    // A canary's variant is traced after the load, against the registry's record of the canaries it served.
    if (isCanary(variant)) return [...problems, ...decisionProblems(json, LOAD_USER, variant)];
    const either = [LOAD_VARIANT, assign(SWITCHED, LOAD_USER)];
    const decision = decisionProblems(json, LOAD_USER, typeof variant === 'string' && either.includes(variant) ? variant : LOAD_VARIANT);
    if (decision.length > 0) return [...problems, ...decision];
    const served = answer.sentAt === undefined ? undefined : services.get(STATSD)?.answeredBetween(EXPERIMENT_PATH, answer.sentAt - STALE_AFTER_MS, answer.receivedAt);
    // Without the registry's changes (or the request's time) there is nothing to compare the variant with.
    if (!served || served.some((experiment) => assign(experiment as Experiment, LOAD_USER) === variant)) return problems;
    return [...problems, `the variant of an allocation the registry replaced more than ${STALE_AFTER_MS} ms before the request went out (a decision kept from an earlier request)`];
  },
};

/**
 * The sink's counts once nothing has arrived for 300 ms (at most 3 s): the metrics of the load's last
 * decisions are in, so they are not taken for the probe's.
 */
async function quietCounts(statsd: StatsdContext): Promise<StatsdCounts> {
  const started = Date.now();
  let counts = await statsd.counts();
  for (;;) {
    await sleep(300);
    const now = await statsd.counts();
    if (now.lines === counts.lines || Date.now() - started > 3000) return now;
    counts = now;
  }
}

/** How long the registry takes to answer: every decision's registry_ms and latency_ms include it. */
const REGISTRY_LATENCY_MS = 2;
/**
 * The most a timing may read on average, in ms: the shipped server's answers take tens of milliseconds
 * under load, a second at their slowest; a timing sent in microseconds reads thousands.
 */
const TIMING_MEAN_AT_MOST_MS = 1000;
/** Each metric's StatsD type as a backend reads it: counters, and timings (a histogram or a distribution is one too). */
const METRIC_TYPES: Record<string, string[]> = {
  'decisions.registry_ms': ['ms', 'h', 'd'],
  'decisions.requests': ['c'],
  'decisions.assigned': ['c'],
  'decisions.latency_ms': ['ms', 'h', 'd'],
};

/** The lines of each metric by shape (type and tags), counted from `since`. */
function shapesSince(now: StatsdShapes, since: StatsdShapes = {}): StatsdShapes {
  const result: StatsdShapes = {};
  for (const [name, byShape] of Object.entries(now)) {
    for (const [shape, { lines, sum, sampled }] of Object.entries(byShape)) {
      const before = since[name]?.[shape] ?? { lines: 0, sum: 0, sampled: 0 };
      if (lines > before.lines) {
        (result[name] ??= {})[shape] = { lines: lines - before.lines, sum: sum === null || before.sum === null ? null : sum - before.sum, sampled: sampled - before.sampled };
      }
    }
  }
  return result;
}

/**
 * What the metrics' lines carried, as a dashboard reads them: each of its type, every `assigned` line tagged
 * with the experiment and one variant of it, and timings that include the registry's answer (their mean
 * at least half of it). Returns the problems, and the `assigned` lines by variant.
 */
function metricContent(shapes: StatsdShapes): { problems: string[]; assignedBy: Record<string, number>; canaries: Record<string, number> } {
  const problems: string[] = [];
  const assignedBy: Record<string, number> = {};
  const canaries: Record<string, number> = {};
  const variants = REGISTERED.variants.map((v) => v.name);
  for (const name of METRICS) {
    const byShape = Object.entries(shapes[name] ?? {});
    const wrongType = byShape.filter(([shape]) => !METRIC_TYPES[name]!.includes(shape.split('|')[0]!)).reduce((sum, [, s]) => sum + s.lines, 0);
    if (wrongType > 0) problems.push(`${name}: ${n(wrongType)} lines not of type ${METRIC_TYPES[name]!.join(' or ')} (${byShape.map(([shape]) => shape.split('|')[0] || 'none').join(', ')})`);
    // One line for each decision (the counts by time hold them to that), so none may stand for more or less.
    const sampled = byShape.reduce((sum, [, s]) => sum + s.sampled, 0);
    if (sampled > 0) problems.push(`${name}: ${n(sampled)} lines sent with a sample rate under 1, which StatsD scales up: each reads as more than one decision`);
    if (METRIC_TYPES[name]!.includes('c')) {
      const lines = byShape.reduce((sum, [, s]) => sum + s.lines, 0);
      const total = byShape.reduce((sum, [, s]) => (s.sum === null ? NaN : sum + s.sum), 0);
      if (total !== lines) problems.push(`${name}: ${n(lines)} lines that count ${Number.isFinite(total) ? n(total) : 'no number'}, where each decision counts 1`);
    }
    if (METRIC_TYPES[name]!.includes('ms')) {
      const lines = byShape.reduce((sum, [, s]) => sum + s.lines, 0);
      const total = byShape.reduce((sum, [, s]) => (s.sum === null ? NaN : sum + s.sum), 0);
      if (lines > 0 && !(total / lines >= REGISTRY_LATENCY_MS / 2)) {
        problems.push(`${name}: a mean of ${Number.isFinite(total) ? `${(total / lines).toFixed(2)} ms` : 'no number'} over ${n(lines)} lines, for decisions that wait ${REGISTRY_LATENCY_MS} ms for the registry`);
      } else if (lines > 0 && total / lines > TIMING_MEAN_AT_MOST_MS) {
        problems.push(`${name}: a mean of ${n(Math.round(total / lines))} ms over ${n(lines)} lines, for decisions whose answers come in milliseconds: not milliseconds`);
      }
    }
  }
  let untagged = 0;
  for (const [shape, { lines }] of Object.entries(shapes['decisions.assigned'] ?? {})) {
    const tags = shape.split('|')[1]?.split(',') ?? [];
    const variant = tags.filter((t) => t.startsWith('variant:')).map((t) => t.slice('variant:'.length));
    const experiment = tags.filter((t) => t.startsWith('experiment:'));
    const tagged = variant.length === 1 && experiment.length === 1 && experiment[0] === `experiment:${EXPERIMENT}`;
    if (tagged && isCanary(variant[0])) canaries[variant[0]] = (canaries[variant[0]] ?? 0) + lines;
    else if (tagged && variants.includes(variant[0]!)) assignedBy[variant[0]!] = (assignedBy[variant[0]!] ?? 0) + lines;
    else untagged += lines;
  }
  if (untagged > 0) problems.push(`decisions.assigned: ${n(untagged)} lines without the tags experiment:${EXPERIMENT} and one variant:<${variants.join('|')}>`);
  return { problems, assignedBy, canaries };
}

/** Metrics short of `expected` each, counted from `since` (the sink's counts before the decisions were asked for). */
function missing(counts: StatsdCounts, expected: number, since?: StatsdCounts): string[] {
  const arrived = (name: string) => (counts.byName[name] ?? 0) - (since?.byName[name] ?? 0);
  return METRICS.filter((name) => arrived(name) < expected).map((name) => `${name}: ${n(arrived(name))} of ${n(expected)} arrived`);
}

async function check(baseUrl: string, { services }: CheckContext): Promise<CheckResult> {
  const expect = new Expectations();
  const statsd = services.get(STATSD);
  if (!expect.expect(Boolean(statsd), 'the StatsD service is running')) return expect.result();
  // The probe also runs after the load, when the sink already holds the load's metrics: count from here.
  const before = await quietCounts(statsd!);
  const shapesBefore = await statsd!.shapes();
  /** The variant of each decision the probe asks for, as the registry's allocation gives it. */
  const decided: Record<string, number> = {};
  // The registry holds still for the probe, at its allocation as the workshop starts it.
  await statsd!.holdRoutes(async () => {
    for (const user of PROBE_USERS) {
      const variant = await expectDecision(expect, baseUrl, user, REGISTERED, "each user gets the variant of the experiment's allocation");
      decided[variant] = (decided[variant] ?? 0) + 1;
    }
    // A ramp-up in the registry applies to the next decision: the service must not keep an old copy.
    const ramped: Experiment = { name: EXPERIMENT, variants: REGISTERED.variants.map((v, i) => ({ ...v, weight: i === REGISTERED.variants.length - 1 ? 100 : 0 })) };
    await statsd!.setUpstreamRoutes({ ...REGISTRY, [EXPERIMENT_PATH]: ramped });
    try {
      for (const user of RAMP_USERS) {
        const variant = await expectDecision(expect, baseUrl, user, ramped, "the decision follows the experiment's current allocation in the registry");
        decided[variant] = (decided[variant] ?? 0) + 1;
      }
    } finally {
      await statsd!.setUpstreamRoutes(REGISTRY);
    }
  });
  // Every decision reports its four metrics to StatsD, under the StatsD name.
  const { counts } = await waitForLines(statsd!, before.lines + PROBE_REQUESTS * METRICS.length, { quietMs: 3000, limitMs: 8000 });
  const short = missing(counts, PROBE_REQUESTS, before);
  expect.expect(short.length === 0, `every decision sends its four metrics (${METRICS.join(', ')})`, short.join('; '));
  // What they carry: the variant each decision gave, and the time it took.
  const { problems, assignedBy } = metricContent(shapesSince(await statsd!.shapes(), shapesBefore));
  const unmatched = Object.entries(decided).filter(([variant, count]) => (assignedBy[variant] ?? 0) < count);
  if (unmatched.length > 0) {
    const got = Object.entries(assignedBy).map(([variant, count]) => `${variant} ${count}`).join(', ') || 'none';
    problems.push(`decisions.assigned tagged by variant: ${got}, for decisions ${Object.entries(decided).map(([variant, count]) => `${variant} ${count}`).join(', ')}`);
  }
  expect.expect(problems.length === 0, 'the metrics carry their type, the variant decided (tagged) and the time taken', problems.join('; '));
  return expect.result();
}

/** Decisions asked for by `clients` one at a time each, `pauseMs` apart, until `until()`; returns how many were answered 200. */
async function keepAsking(baseUrl: string, pace: { clients: number; pauseMs: number }, until: () => boolean): Promise<{ answered: number; failed: number }> {
  let answered = 0;
  let failed = 0;
  let user = 0;
  await Promise.all(
    Array.from({ length: pace.clients }, async () => {
      while (!until()) {
        const response = await fetchResponse(decideUrl(baseUrl, `u-${3000 + user++}`)).catch(() => undefined);
        if (response?.status === 200) answered += 1;
        else failed += 1;
        await sleep(pace.pauseMs);
      }
    }),
  );
  return { answered, failed };
}

/**
 * How far apart the decisions come while the StatsD record moves: a quiet service's pace, ~8 a second, so
 * that a client must follow the record by its TTL, not by how many metrics it has sent (at 4 loops 20 ms
 * apart, one that looked the name up again every 1,000 sends followed it in time).
 */
const QUIET = { clients: 1, pauseMs: 100, leadMs: 0, what: 'one decision at a time, ~8 a second' };
/**
 * And the record moves back while decisions come at a busy service's pace, a second into it: a client must
 * not follow the record only when it is quiet.
 */
const BUSY = { clients: 8, pauseMs: 10, leadMs: 1000, what: 'eight clients, each 10 ms after its last answer' };

/**
 * After the record moves, metrics must follow it within its TTL plus a second. Keeps deciding at `pace`
 * from `leadMs` before the move, then measures what arrives at each address in the 1.5 s after that deadline.
 */
async function checkRecordMove(expect: Expectations, baseUrl: string, statsd: StatsdContext, from: string, to: string, pace: typeof QUIET): Promise<void> {
  const deadlineMs = (statsd.ttlSeconds + 1) * 1000;
  let moved = Number.POSITIVE_INFINITY;
  const before = keepAsking(baseUrl, pace, () => Date.now() - moved >= deadlineMs);
  await sleep(pace.leadMs);
  await statsd.moveRecord(to);
  moved = Date.now();
  await before;
  const atDeadline = await statsd.counts();
  const after = await keepAsking(baseUrl, pace, () => Date.now() - moved >= deadlineMs + 1500);
  await sleep(300);
  const end = await statsd.counts();
  const toOld = (end.byAddress[from] ?? 0) - (atDeadline.byAddress[from] ?? 0);
  const toNew = (end.byAddress[to] ?? 0) - (atDeadline.byAddress[to] ?? 0);
  const failed = (await before).failed + after.failed;
  expect.expect(failed === 0, `decisions keep being answered while the StatsD record moves (${pace.what})`, `${failed} failed`);
  expect.expect(
    toOld === 0,
    `metrics follow the StatsD record within its TTL + 1 s (${statsd.ttlSeconds + 1} s), ${pace.what}`,
    `after the record moved from ${from} to ${to}, with ${pace.what}, metrics still reach the old address: ${n(toOld)} lines arrived at ${from} ` +
      `more than ${statsd.ttlSeconds + 1} s after the move (${n(toNew)} at ${to})`,
  );
  // At a busy pace a client may still hold the last lines in its buffer (a second, as hot-shots batches).
  const expected = pace === QUIET ? after.answered * METRICS.length : 1;
  expect.expect(
    toNew >= expected,
    `metrics arrive at the record's new address ${to} (${pace.what})`,
    `${n(toNew)} lines for ${n(after.answered)} decisions made more than ${statsd.ttlSeconds + 1} s after the move`,
  );
}

/** After the load: no metric lost, then the StatsD record moves and metrics must follow it. */
/**
 * How long after its answer a decision's metrics may reach the sink: a client that sends at once takes
 * milliseconds, one that batches (hot-shots' bufferFlushInterval, a second by default) up to its interval.
 * The shipped server's metrics, which wait in the DNS queue, come well inside it (the solution's README
 * has the figures). Metrics held while the load lasts are a whole phase late: the warm-up is 4 s.
 */
const METRICS_WITHIN_MS = 3000;

/**
 * Every decision answered under load had its metrics at the sink soon after: counted at each step of the
 * load's answers, each metric's lines arrived by the step and the deadline. The probe's lines are in the
 * count too, which only makes it kinder.
 */
async function expectMetricsKeptUp(expect: Expectations, statsd: StatsdContext, answeredBy: AfterLoadContext['answeredBy']): Promise<void> {
  if (answeredBy.length === 0) return;
  /** The decisions answered by some step whose metric lines had not all arrived `within` ms later: the worst step. */
  const worstAfter = async (within: number) => {
    let worst = { missing: 0, name: '', step: 0 };
    for (const name of METRICS) {
      const arrived = await statsd.arrivedBy(name, answeredBy.map(({ at }) => at + within));
      answeredBy.forEach(({ answered: decided }, step) => {
        const missing = decided - (arrived[step] ?? 0);
        if (missing > worst.missing) worst = { missing, name, step };
      });
    }
    return worst;
  };
  const worst = await worstAfter(METRICS_WITHIN_MS);
  // How soon they came, for the report: the shortest of a few deadlines that every step met.
  let soonest = METRICS_WITHIN_MS;
  if (worst.missing <= 0) {
    for (const within of [100, 250, 500, 1000, 1500, 2000]) {
      if ((await worstAfter(within)).missing <= 0) {
        soonest = within;
        break;
      }
    }
  }
  const { at, answered: decided } = answeredBy[worst.step]!;
  expect.expect(
    worst.missing <= 0,
    `every decision answered under load had its metrics at the sink within ${METRICS_WITHIN_MS / 1000} s of its answer ` +
      `(${worst.missing <= 0 ? `all within ${soonest / 1000} s; ` : ''}the load's answers counted at ${answeredBy.length} times)`,
    `of the ${n(decided)} decisions answered by ${((at - answeredBy[0]!.at) / 1000).toFixed(1)} s after the load's first answer, ` +
      `${n(worst.missing)} had no ${worst.name} line at the sink ${METRICS_WITHIN_MS / 1000} s later`,
  );
}

/**
 * The load's user gets one variant while the registry serves one allocation and the other while it serves
 * the other, which it switches every SWITCH_EVERY_MS: each variant is some of the load's decisions, and each
 * takes at least this share of the `assigned` lines (the solution's README has the shares measured).
 */
const LEAST_VARIANT_SHARE = 0.1;

/**
 * Each canary the registry served was decided by the decision that asked for it, and by no other: its
 * variant is on one `assigned` line. Read once the sink is quiet, after every decision of the run.
 */
async function expectCanariesTraced(expect: Expectations, statsd: StatsdContext): Promise<void> {
  await waitForLines(statsd, Infinity, { quietMs: 1000, limitMs: 10_000 });
  const served = (await statsd.state()).upstream.canaries;
  if (served.length === 0) return;
  const { canaries: tagged } = metricContent(await statsd.shapes());
  const servedNames = new Set(served);
  const untraced = served.filter((name) => !tagged[name]).length;
  const repeated = Object.values(tagged).filter((lines) => lines > 1).length;
  const unknown = Object.keys(tagged).filter((name) => !servedNames.has(name)).length;
  const astray = untraced + repeated + unknown;
  const within = astray > 0 ? ` (${n(astray)} not, within the ${CANARIES_ASTRAY_SHARE * 100}% allowed)` : '';
  expect.expect(
    astray <= Math.max(1, served.length * CANARIES_ASTRAY_SHARE),
    `each decision gives the allocation its own registry request got: the ${n(served.length)} one-off allocations the registry served (one answer in ${CANARY_EVERY}) each on one decisions.assigned line${within}`,
    `the registry served ${n(served.length)} one-off allocations, each in the answer to one request: ${n(untraced)} named on no decisions.assigned line, ` +
      `${n(repeated)} on more than one${unknown > 0 ? `, and ${n(unknown)} lines named one it never served` : ''}`,
  );
}

/** Every metric line the run sent, probe and load, carries its content; and the load's `assigned` lines name both variants it got. */
function expectContentUnderLoad(expect: Expectations, shapes: StatsdShapes): void {
  const { problems, assignedBy } = metricContent(shapes);
  const total = Object.values(assignedBy).reduce((sum, count) => sum + count, 0);
  const rare = [LOAD_VARIANT, assign(SWITCHED, LOAD_USER)].filter((variant) => (assignedBy[variant] ?? 0) < total * LEAST_VARIANT_SHARE);
  if (total > 0 && rare.length > 0) {
    problems.push(
      `decisions.assigned tagged ${Object.entries(assignedBy).map(([variant, count]) => `${variant} ${n(count)}`).join(', ')}: ` +
        `${rare.join(' and ')} under ${LEAST_VARIANT_SHARE * 100}% of them, while the load's answers switch between both`,
    );
  }
  const shares = Object.entries(assignedBy).map(([variant, count]) => `${variant} ${((count / Math.max(1, total)) * 100).toFixed(0)}%`).join(', ');
  expect.expect(problems.length === 0, `every metric line carries its type, variant and time (decisions.assigned by variant: ${shares})`, problems.join('; '));
}

async function afterLoad({ services, baseUrl, answered, answeredBy, probeAnswers, inFlightAtMost }: AfterLoadContext): Promise<CheckResult> {
  const expect = new Expectations();
  const statsd = services.get(STATSD)!;
  // The probe decides too, before the load and after it.
  const least = answered + probeAnswers;
  // Requests in flight when each phase of the load stopped were decided without being counted.
  const most = least + inFlightAtMost;
  const settled = await waitForLines(statsd, least * METRICS.length, { quietMs: 3000, limitMs: 60_000 });
  const short = missing(settled.counts, least);
  expect.expect(
    short.length === 0,
    `no metric lost: every decision answered has its four metrics at the sink (${n(answered)} answered under load, ` +
      `${n(settled.counts.lines)} lines, ${settled.waitedMs < 100 ? 'all there when the load stopped' : `the last ${(settled.waitedMs / 1000).toFixed(1)} s after the load stopped`})`,
    `${short.join('; ')} ${settled.settled ? '(nothing arrived for 3 s)' : 'after 60 s'}`,
  );
  // Each decision reads its experiment from the registry: one request or more each, the probe's too.
  const { upstream } = await statsd.state();
  expect.expect(
    upstream.requests >= least,
    `every decision asked the registry (${n(upstream.requests)} requests for ${n(least)} decisions answered)`,
    `${n(least - upstream.requests)} decisions were answered without a request to the registry of their own`,
  );
  await expectMetricsKeptUp(expect, statsd, answeredBy);
  expectContentUnderLoad(expect, await statsd.shapes());
  const twice = METRICS.filter((name) => (settled.counts.byName[name] ?? 0) > most);
  expect.expect(twice.length === 0, 'no metric sent twice', twice.map((name) => `${name}: ${n(settled.counts.byName[name]!)} for at most ${n(most)} decisions`).join('; '));
  if (short.length > 0) return expect.result();
  const [first, second] = statsd.sinkAddresses as [string, string];
  await checkRecordMove(expect, baseUrl, statsd, first, second, QUIET);
  await checkRecordMove(expect, baseUrl, statsd, second, first, BUSY);
  await expectCanariesTraced(expect, statsd);
  return expect.result();
}

/**
 * A DNS server that answers 1,000 lookups a second, a StatsD sink behind a name, and the experiment
 * registry behind another name, whose load balancer closes a connection after 10 requests, and where the
 * load's experiment switches allocation every SWITCH_EVERY_MS, and one answer in CANARY_EVERY is a canary
 * (neither while the probes run).
 */
const STATSD = statsdService({
  dnsLatencyMs: 1,
  dnsAnswersPerSecond: 1000,
  ttlSeconds: 2,
  upstreamName: 'experiments.hotpath.test',
  upstreamLatencyMs: REGISTRY_LATENCY_MS,
  upstreamRequestsPerConnection: 10,
  upstreamRoutes: REGISTRY,
  upstreamChanges: { path: EXPERIMENT_PATH, everyMs: SWITCH_EVERY_MS, documents: [REGISTERED, SWITCHED] },
  upstreamCanaries: { path: EXPERIMENT_PATH, every: CANARY_EVERY, most: CANARIES_AT_MOST, document: CANARY },
});

export default defineExercise({
  id: '07-p99-hits-a-second',
  title: 'The decisions whose p99 hits a second',
  caseStudy: {
    company: 'Klarna',
    article: '6 lessons learned from optimizing the performance of a Node.js service (Klarna engineering), lesson 4',
    source: 'shared/seeds/001_c4c8d87c112f4b96.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  services: [STATSD],
  // The probe counts live async resources by type: c-ares lookups in flight show as QUERYWRAP.
  probe: { asyncResources: true },
  load: {
    path: `/decide?experiment=${EXPERIMENT}&user=${LOAD_USER}`,
    connections: 30,
    // Seconds, not one: a fixed server reaches its pace only after seconds of load, and a slow first turn
    // weighs on p99's interval (the solution's README).
    warmupSeconds: 4,
    durationSeconds: 8,
    // The slowdown builds within a turn, so every turn's p99 shows it (see the solution's README for the
    // figures).
    turns: { seconds: 2, maxRounds: 7 },
  },
  check,
  contract,
  afterLoad,
  goal: [
    { metric: latencyP99, against: 'broken', atMost: 0.25 },
    { metric: pendingLookups, against: 'broken', atMost: 0.05 },
  ],
});
