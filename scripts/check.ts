// Helpers for correctness probes: fetch a response, record each expectation, report what failed.

export interface CheckResult {
  ok: boolean;
  passed: string[];
  failures: string[];
}

export class Expectations {
  private readonly passed: string[] = [];
  private readonly failures: string[] = [];

  /** Records `description` as passed when `condition` holds, else as a failure with `detail` after it. */
  expect(condition: boolean, description: string, detail?: string): boolean {
    if (condition) this.passed.push(description);
    else this.failures.push(detail ? `${description}: ${detail}` : description);
    return condition;
  }

  result(): CheckResult {
    return { ok: this.failures.length === 0 && this.passed.length > 0, passed: [...this.passed], failures: [...this.failures] };
  }
}

/** One thing a client relies on in an answer, kept or not; `what` is the same words for every answer. */
export interface Finding {
  ok: boolean;
  what: string;
  detail?: string;
}

/**
 * Records one expectation for a sample of what a server made under load, each item read whole (its
 * findings): kept when every item kept every promise, else how many broke one, with the three problems
 * seen most (each with its count and an example).
 */
export function expectSample(expect: Expectations, description: string, items: readonly Finding[][]): boolean {
  const failed = new Map<string, { count: number; detail?: string }>();
  let broken = 0;
  for (const findings of items) {
    const problems = findings.filter((f) => !f.ok);
    if (problems.length > 0) broken += 1;
    for (const { what, detail } of problems) {
      const seen = failed.get(what);
      if (seen) seen.count += 1;
      else failed.set(what, { count: 1, ...(detail === undefined ? {} : { detail }) });
    }
  }
  const worst = [...failed].sort((a, b) => b[1].count - a[1].count);
  const named = worst.slice(0, 3).map(([what, { count, detail }]) => `${what} (${count}${detail ? `, e.g. ${detail}` : ''})`);
  if (worst.length > 3) named.push(`and ${worst.length - 3} more`);
  return expect.expect(
    items.length > 0 && broken === 0,
    description,
    items.length === 0 ? 'nothing to read' : `${broken} of ${items.length} read break it: ${named.join('; ')}`,
  );
}

export interface FetchedResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** 2xx answers probes got, by origin: the work a probe adds to what the load asked of a server. */
const answeredByOrigin = new Map<string, number>();

/** How many 2xx answers probes have had from this server (its base URL) so far. */
export function probeAnswers(baseUrl: string): number {
  return answeredByOrigin.get(new URL(baseUrl).origin) ?? 0;
}

export async function fetchResponse(url: string, init: RequestInit = {}, timeoutMs = 5000): Promise<FetchedResponse> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  if (response.status >= 200 && response.status < 300) {
    const origin = new URL(url).origin;
    answeredByOrigin.set(origin, (answeredByOrigin.get(origin) ?? 0) + 1);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** One GET timed from the request to the whole answer, in milliseconds, with its status: for probes that compare times. */
export async function timedGet(url: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await fetchResponse(url);
  return { ms: performance.now() - started, status: response.status };
}

/** Runs a probe and turns a thrown error (connection refused, timeout) into a failed check. */
export async function runCheck(probe: (baseUrl: string) => Promise<CheckResult>, baseUrl: string): Promise<CheckResult> {
  try {
    return await probe(baseUrl);
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, passed: [], failures: [`the probe could not complete: ${message}`] };
  }
}
