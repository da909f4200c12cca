// A small, valid manifest and server runs for the unit tests.
import { Expectations, fetchResponse } from '../scripts/check.ts';
import type { Exercise } from '../scripts/exercises.ts';
import { defineExercise, type ExerciseManifest } from '../scripts/manifest.ts';
import type { LoadResult, ServerRun } from '../scripts/result.ts';
import type { RuntimeFigures } from '../scripts/probe/messages.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { fixture } from './helpers.ts';

export function sampleManifest(changes: Partial<ExerciseManifest> = {}): ExerciseManifest {
  return defineExercise({
    id: '99-sample',
    title: 'Sample',
    caseStudy: { company: 'Example', article: 'An article', source: 'nowhere' },
    serverFile: 'server.ts',
    shippedFile: '0-as-shipped.ts',
    ceilingFile: 'ceiling.ts',
    load: { path: '/', connections: 10, warmupSeconds: 1, durationSeconds: 2 },
    check: async () => ({ ok: true, passed: ['it answers'], failures: [] }),
    contract: { check: (answer) => (answer.status === 200 ? [] : [`status ${answer.status}`]) },
    stages: [
      { file: '1-first-fix.ts', title: 'first fix', changes: 'fixes it', targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 10 }] },
      {
        file: '2-second-fix.ts',
        title: 'second fix',
        changes: 'fixes more',
        targets: [
          { metric: requestsPerSecond, against: 'previous', atLeast: 1.5 },
          { metric: requestsPerSecond, against: 'ceiling', atLeast: 0.8 },
        ],
      },
    ],
    goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 10 }],
    hints: ['look', 'look harder'],
    ...changes,
  });
}

export function loadResult(requestsPerSecond: number, changes: Partial<LoadResult> = {}): LoadResult {
  return {
    requestsPerSecond: { mean: requestsPerSecond, stdev: requestsPerSecond / 20 },
    latency: { p50: 1, p90: 2, p99: 3, max: 9, mean: 1.2 },
    bytesPerSecond: requestsPerSecond * 1000,
    requests: requestsPerSecond * 2,
    errors: 0,
    timeouts: 0,
    non2xx: 0,
    answered: requestsPerSecond * 3,
    perSecond: [requestsPerSecond, requestsPerSecond],
    durationSeconds: 2,
    ...changes,
  };
}

export function serverRun(label: string, role: ServerRun['role'], requestsPerSecond: number | undefined, changes: Partial<ServerRun> = {}): ServerRun {
  const stage = role === 'stage' ? Number(label.replace('stage ', '')) : undefined;
  return {
    role,
    label,
    title: label,
    file: `${label}.ts`,
    stage,
    nodeFlags: [],
    check: { ok: true, passed: ['it answers'], failures: [] },
    load: requestsPerSecond === undefined ? undefined : loadResult(requestsPerSecond),
    ...changes,
  };
}

/** The probe's figures over `wallMs`, with `minorShare` of it in scavenges. */
export function runtimeFigures(wallMs: number, minorMs: number, minorCount: number, changes: Partial<RuntimeFigures> = {}): RuntimeFigures {
  return {
    wallMs, heapUsed: 50e6, heapTotal: 80e6, rss: 120e6,
    gc: {
      minor: { count: minorCount, ms: minorMs, share: minorMs / wallMs },
      major: { count: 1, ms: 5, share: 5 / wallMs },
      other: { count: 0, ms: 0, share: 0 },
    },
    eventLoopDelay: { mean: 1, p50: 1, p90: 2, p99: 3, max: 4 },
    activeResources: {},
    activeResourcesPeak: {},
    ...changes,
  };
}

/** An exercise made of fixture servers, with a short load, to run the whole pipeline quickly. */
export function fixtureExercise(files: { mine: string; broken?: string }, changes: Partial<ExerciseManifest> = {}): Exercise {
  const manifest = sampleManifest({
    load: { path: '/', connections: 2, warmupSeconds: 0.5, durationSeconds: 1 },
    check: async (baseUrl) => {
      const expect = new Expectations();
      const response = await fetchResponse(baseUrl);
      expect.expect(response.text === 'ok', 'answers ok', `got ${JSON.stringify(response.text)}`);
      return expect.result();
    },
    contract: { check: (answer) => (answer.status === 200 && answer.body === 'ok' ? [] : [`answered ${answer.status} ${JSON.stringify(answer.body)}, not 200 "ok"`]) },
    ...changes,
  });
  return {
    manifest,
    dir: '',
    solutionsDir: '',
    serverFile: fixture(files.mine),
    shippedFile: fixture(files.broken ?? 'answers.ts'),
    ceilingFile: fixture('answers.ts'),
    stageFile: () => fixture('answers.ts'),
  };
}

