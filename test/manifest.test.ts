import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadAllExercises } from '../scripts/exercises.ts';
import { FORMER_IDS } from '../scripts/former-ids.ts';
import { validateManifest, type Metric } from '../scripts/manifest.ts';
import { backlogGrowth } from '../scripts/metrics/backlog-growth.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { throughputKept } from '../scripts/metrics/throughput-kept.ts';
import { sampleManifest, serverRun } from './sample.ts';

describe('manifest validation', () => {
  it('accepts a sound manifest', () => {
    expect(validateManifest(sampleManifest())).toEqual([]);
  });

  it('refuses a target against a ceiling that does not exist', () => {
    expect(validateManifest(sampleManifest({ ceilingFile: undefined }))).toContain('a target is set against the ceiling, but there is no ceilingFile');
  });

  it('names each problem', () => {
    const problems = validateManifest(
      sampleManifest({
        id: 'sample',
        load: { path: 'seed', connections: 0, warmupSeconds: -1, durationSeconds: 0 },
        hints: [],
        goal: [{ metric: requestsPerSecond, against: 'previous', atLeast: 2 }],
        stages: [
          { file: '2-wrong-number.ts', title: 't', changes: 'c', targets: [] },
          { file: '2-wrong-number.ts', title: 't', changes: 'c', targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2, atMost: 3 }] },
        ],
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'id "sample" must look like 01-some-slug',
        'load.path "seed" must start with /',
        'load.connections must be a positive integer',
        'load.warmupSeconds must be 0 or more',
        'load.durationSeconds must be between 0 and 600: every run is bounded',
        'there must be at least one hint',
        'stage 1: file "2-wrong-number.ts" must be named 1-<what-changes>.ts',
        'stage 1: has no target',
        'stage 2: file "2-wrong-number.ts" is used twice',
        'stage 2: a target needs exactly one of atLeast or atMost',
        'goal: a target against "previous" has no meaning for the trainee\'s file',
      ]),
    );
  });

  it("judges only ratio metrics against 'itself'", () => {
    const load = { ...sampleManifest().load, freshCopy: { pairs: 6 } };
    const itself = (metric: Metric) => validateManifest(sampleManifest({ load, goal: [{ metric, against: 'itself', atLeast: 0.9 }] }));
    expect(itself(throughputKept)).toEqual([]);
    expect(itself(requestsPerSecond)).toEqual(["goal: requestsPerSecond is not a ratio of the server's own figures: it cannot be judged against 'itself'"]);
  });

  it('asks for a fresh copy to judge throughputKept by, of 2 to 30 pairs', () => {
    const goal = [{ metric: throughputKept, against: 'itself' as const, atLeast: 0.9 }];
    expect(validateManifest(sampleManifest({ goal }))).toEqual(['throughputKept needs a fresh copy to compare with (load.freshCopy)']);
    const load = { ...sampleManifest().load, freshCopy: { pairs: 1 } };
    expect(validateManifest(sampleManifest({ load, goal }))).toEqual(['load.freshCopy.pairs must be a whole number from 2 to 30']);
  });

  it('asks for a count of finished work to judge backlogGrowth by, read around one measured phase', () => {
    const goal = [{ metric: backlogGrowth, against: 'broken' as const, atMost: 0.4 }];
    expect(validateManifest(sampleManifest({ goal }))).toEqual(["backlogGrowth needs a count of the work finished (the manifest's finishedWork)"]);
    const finishedWork = async () => 0;
    expect(validateManifest(sampleManifest({ goal, finishedWork }))).toEqual(['finishedWork is read around one measured phase: it needs load.turns: false']);
    const load = { ...sampleManifest().load, turns: false as const };
    expect(validateManifest(sampleManifest({ goal, finishedWork, load }))).toEqual([]);
  });

  it('reads backlogGrowth as answers a second less the work finished a second, over the measured phase', () => {
    const run = serverRun('mine', 'mine', 300);
    expect(backlogGrowth.read(run)).toBeUndefined();
    expect(backlogGrowth.read({ ...run, finishedWork: { count: 540, seconds: 6 } })).toBe(210);
    expect(backlogGrowth.read({ ...run, finishedWork: { count: 2100, seconds: 6 } })).toBe(-50);
    expect(backlogGrowth.format(209.6)).toBe('210/s');
  });

  it('rejects ratios that are not positive numbers', () => {
    const manifest = sampleManifest({ goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 0 }] });
    expect(validateManifest(manifest)).toContain("goal: a target's ratio must be a positive number");
  });

  it('every shipped exercise loads and validates, with its files in place', async () => {
    const exercises = await loadAllExercises();
    expect(exercises.length).toBeGreaterThan(0);
    for (const exercise of exercises) expect(validateManifest(exercise.manifest)).toEqual([]);
  });

  it("keeps what names the fix out of the trainee's folder", async () => {
    for (const exercise of await loadAllExercises()) {
      const { id, stages } = exercise.manifest;
      // The declaration has no stages, hints or profile answer: those are in solutions/<id>/stages.ts.
      const declaration = (await import(pathToFileURL(path.join(exercise.dir, 'exercise.ts')).href)).default as object;
      expect(Object.keys(declaration).filter((key) => ['stages', 'hints', 'profile', 'doctor'].includes(key)), id).toEqual([]);
      // No file of the folder names a stage (its title or its file's name) or the exercise's former id.
      // (The former id of 09 is its case study's name, which the story tells.)
      const former = Object.entries(FORMER_IDS).find(([, current]) => current === id)![0].slice(3);
      const formerNames = [former, former.replace(/-/g, ' ')].filter((name) => !exercise.manifest.caseStudy.company.toLowerCase().includes(name));
      const names = [...stages.flatMap((stage) => [stage.title, stage.file.replace(/^\d+-|\.ts$/g, '').replace(/-/g, ' ')]), ...formerNames];
      // 03's micro-benchmark compares serializers on purpose, as the article's did: it is the exercise's tool.
      for (const file of readdirSync(exercise.dir).filter((f) => /\.(ts|md)$/.test(f) && !f.endsWith('.bench.ts'))) {
        const text = readFileSync(path.join(exercise.dir, file), 'utf8').toLowerCase();
        for (const name of names) expect(text.includes(name.toLowerCase()), `exercises/${id}/${file} names "${name}"`).toBe(false);
      }
    }
  });
});
