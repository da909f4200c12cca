// A service and a metric defined here, in a test file, used in a manifest and run through the harness: a
// real server for each role, started with the service's environment, loaded in turns, and judged on the
// metric. Nothing in scripts/ knows of either.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { Expectations } from '../scripts/check.ts';
import { defineMetric } from '../scripts/metric.ts';
import { renderJson, renderReport } from '../scripts/report.ts';
import { defineService } from '../scripts/service.ts';
import { fixtureExercise } from './sample.ts';
import { tempFolder } from './temp-folder.ts';

/** A registry the servers announce themselves to at start: an HTTP server in this process, one per start. */
const starts: string[] = [];
const registry = defineService<{ url: string; announced(): string[] }>({
  name: 'registry (a test service)',
  async start(folder) {
    starts.push(folder);
    const announced: string[] = [];
    const server = http.createServer((request, response) => {
      announced.push(request.url ?? '');
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    return {
      prepare: async () => ({ env: { REGISTRY_URL: url }, context: { url, announced: () => [...announced] } }),
      describe: () => `registry at ${url}`,
      stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
});

/** Bytes of answer per request: a figure the workshop does not ship. */
const bytesPerAnswer = defineMetric({
  id: 'bytesPerAnswer',
  name: 'bytes per answer',
  unit: 'B',
  means: 'bytes sent per request answered.',
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => (run.load && run.load.requestsPerSecond.mean > 0 ? run.load.bytesPerSecond / run.load.requestsPerSecond.mean : undefined),
  format: (value) => `${Math.round(value)} B/answer`,
});

const folder = tempFolder('hotpath-open-manifest-');

/** A server that announces itself to the registry, then answers every request with `size` bytes. */
function serverFile(name: string, size: number): string {
  const file = path.join(folder(), name);
  writeFileSync(
    file,
    `import http from 'node:http';
await fetch(process.env.REGISTRY_URL + '/${name}');
const body = 'x'.repeat(${size});
http.createServer((_req, res) => res.end(body)).listen(Number(process.env.PORT), '127.0.0.1');
`,
  );
  return file;
}

describe('a manifest that brings its own service and metric', () => {
  it('starts the service for each server, gives the probe its context, and judges the new metric', async () => {
    const exercise = fixtureExercise(
      { mine: 'answers.ts' },
      {
        services: [registry],
        load: { path: '/', connections: 2, warmupSeconds: 0.5, durationSeconds: 1, turns: { seconds: 0.5, minRounds: 3, maxRounds: 3 } },
        contract: { check: (answer) => (answer.status === 200 ? [] : [`status ${answer.status}`]) },
        check: async (baseUrl, { services }) => {
          const expect = new Expectations();
          const context = services.get(registry);
          expect.expect(Boolean(context?.announced().length), 'the server announced itself to the registry', `announced: ${JSON.stringify(context?.announced())}`);
          return expect.result();
        },
        goal: [{ metric: bytesPerAnswer, against: 'broken', atMost: 0.5 }],
      },
    );
    exercise.shippedFile = serverFile('large.mjs', 4000);
    exercise.serverFile = serverFile('small.mjs', 400);

    const report = await runBench(exercise, [specFor(exercise, 'broken', true), specFor(exercise, 'mine', true)]);

    // In turns, each server got a registry of its own, started and stopped by the harness.
    expect(starts).toHaveLength(2);
    expect(report.servers.map((s) => s.check?.ok)).toEqual([true, true]);
    const [verdict] = report.verdicts;
    expect(verdict!.pass, renderReport(report)).toBe(true);
    const [target] = verdict!.targets;
    expect(target!.name).toBe('bytes per answer vs broken');
    expect(target!.ratio!).toBeLessThan(0.5);
    expect(target!.rounds!.ratios).toHaveLength(3);
    expect(target!.shown!.value).toMatch(/^\d+ B\/answer$/);
    // The result stays plain data: the metric by its id.
    expect(JSON.parse(renderJson(report)).verdicts[0].targets[0].target).toEqual({ metric: 'bytesPerAnswer', against: 'broken', atMost: 0.5 });
    expect(renderReport(report)).toMatch(/bytes per answer vs broken .*B\/answer/);
  });
});
