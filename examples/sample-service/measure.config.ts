// `workshop measure examples/sample-service/measure.config.ts`: the service in the work tree as it is,
// against the same service at git HEAD, built the same way, loaded in turns (docs/measure.md).
import { defineMeasure, Expectations, fetchResponse, type CheckResult } from 'hot-path/measure';
import { requestsPerSecond } from 'hot-path/metrics/requests-per-second';

const AMOUNT = 42;

/** What a client relies on: 200, JSON, the amount it asked for, its total with the rate, an id. */
function quoteProblems(status: number, body: unknown, amount: number): string[] {
  const quote = (typeof body === 'object' && body !== null ? body : {}) as { id?: unknown; amount?: unknown; total?: unknown };
  const problems: string[] = [];
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (quote.amount !== amount) problems.push(`amount ${JSON.stringify(quote.amount)}, not ${amount}`);
  if (quote.total !== Math.round(amount * 1.0825 * 100) / 100) problems.push(`total ${JSON.stringify(quote.total)} for ${amount}`);
  if (!(typeof quote.id === 'string' && /^[0-9a-f]{16}$/.test(quote.id))) problems.push(`id ${JSON.stringify(quote.id)} is not 16 hex digits`);
  return problems;
}

async function check(baseUrl: string): Promise<CheckResult> {
  const expect = new Expectations();
  for (const amount of [1, AMOUNT, 1999.99]) {
    const response = await fetchResponse(`${baseUrl}/quote?amount=${amount}`);
    const problems = quoteProblems(response.status, response.json, amount);
    expect.expect(problems.length === 0, `GET /quote?amount=${amount} answers the quote`, problems.join('; '));
  }
  const idOf = async () => ((await fetchResponse(`${baseUrl}/quote?amount=${AMOUNT}`)).json as { id?: string }).id;
  const [first, second] = [await idOf(), await idOf()];
  expect.expect(first !== undefined && first === second, 'the same quote gets the same id', `got ${first} then ${second}`);
  const missing = await fetchResponse(`${baseUrl}/quote`);
  expect.expect(missing.status === 404, 'a quote without an amount answers 404', `got ${missing.status}`);
  return expect.result();
}

export default defineMeasure({
  name: 'sample service, GET /quote',
  // Node itself must be the command's serving process: the probe and its channel come in through it.
  service: { command: 'node app.js' },
  baseline: { git: 'HEAD' },
  load: {
    path: `/quote?amount=${AMOUNT}`,
    connections: 10,
    warmupSeconds: 0.5,
    durationSeconds: 3,
    // Turns of a second, and room for more rounds when the first are too close to call: shorter turns and
    // fewer rounds once left this service, unchanged, too close to call (the figures are in docs/measure.md).
    // A service whose requests take longer wants longer turns.
    turns: { seconds: 1, minRounds: 3, maxRounds: 11 },
  },
  check,
  contract: {
    check: (answer) => {
      try {
        return quoteProblems(answer.status, JSON.parse(answer.body), AMOUNT);
      } catch {
        return [`the body is not JSON: ${answer.body.slice(0, 60)}`];
      }
    },
  },
  // A change may cost at most 40% of the baseline's throughput: two processes of the same code can differ by
  // a quarter on a 2-core machine, so a finer gate calls an unchanged service too close (docs/measure.md).
  targets: [{ metric: requestsPerSecond, against: 'baseline', atLeast: 0.6 }],
});
