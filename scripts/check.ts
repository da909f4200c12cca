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

/** Runs a probe and turns a thrown error (connection refused, timeout) into a failed check. */
export async function runCheck(probe: (baseUrl: string) => Promise<CheckResult>, baseUrl: string): Promise<CheckResult> {
  try {
    return await probe(baseUrl);
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, passed: [], failures: [`the probe could not complete: ${message}`] };
  }
}
