// Known-wrong fixes, part of the author check: each file in test/wrong-fixes/NN-*/ names the failure it
// must trip (`// probe: ...` before any load, `// under-load: ...` for what the load receives or the probe
// finds after it, `// after-load: ...` for what only shows after work), and is rejected for that reason.
// Rejecting one is a matter of what it answers, not of its speed, and most of their time is waiting (for
// uploads, metrics, a moved DNS record): they run several at a time, each with services of its own. The
// ones put under load must each get enough requests to change or to fall behind: on a slower machine,
// eight loaded at once left 08's fire-and-forget too few to pile up, so at most three are loaded at once
// while the ones judged by the probe alone fill the rest (maxConcurrency in vitest.config.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFlagsComment, runBench, type ServerSpec } from '../scripts/bench.ts';
import { loadAllExercises } from '../scripts/exercises.ts';
import { relativeToRoot } from '../scripts/paths.ts';
import { turnLoad } from '../scripts/steady-turns.ts';
import { honestyProblems } from '../scripts/verdict.ts';
import { shippedAsMine, TEST_DIR } from './helpers.ts';

const exercises = await loadAllExercises();

const TAGS = ['probe', 'under-load', 'after-load'] as const;

/** Runs `work` once one of `count` slots is free: a cap on how many of these tests run at once. */
function slots(count: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = count;
  const waiting: Array<() => void> = [];
  return async (work) => {
    if (free === 0) await new Promise<void>((resolve) => waiting.push(resolve));
    else free -= 1;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    }
  };
}
const probed = slots(5);
const loaded = slots(3);

function wrongFixes(id: string): string[] {
  const dir = path.join(TEST_DIR, 'wrong-fixes', id);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f)) : [];
}

/** The file's tag and what it names, e.g. ['under-load', 'the task id repeats an earlier answer's']. */
function tagOf(file: string): [tag: (typeof TAGS)[number], reason: string] | undefined {
  const text = readFileSync(file, 'utf8');
  for (const tag of TAGS) {
    const reason = new RegExp(`^// ${tag}: (.+)$`, 'm').exec(text)?.[1];
    if (reason !== undefined) return [tag, reason];
  }
  return undefined;
}

for (const exercise of exercises) {
  const { id } = exercise.manifest;
  const files = wrongFixes(id);
  const wrongSpec = (file: string): ServerSpec => {
    const spec = shippedAsMine(exercise);
    return { run: { ...spec.run, label: path.basename(file, '.ts'), file: relativeToRoot(file), nodeFlags: nodeFlagsComment(file) }, absoluteFile: file };
  };
  // A short steady load is enough to trip them: they change behaviour after at most a thousand requests,
  // or lose work. No ramp and at most 1,500 req/s: a wrong fix is not judged on speed.
  const { ramp: _ramp, ...steady } = turnLoad(exercise.manifest.load);
  const brief = { ...exercise, manifest: { ...exercise.manifest, load: { ...steady, rate: 1500, warmupSeconds: 0.5, durationSeconds: 2 } } };

  describe.concurrent(`known-wrong fixes: ${id}`, () => {
    it('has at least 3, each naming what rejects it', () => {
      expect(files.length).toBeGreaterThanOrEqual(3);
      for (const file of files) expect(tagOf(file), `${path.basename(file)} has no // probe:, // under-load: or // after-load: line`).toBeDefined();
    });

    it.for(files.map((file) => [path.basename(file, '.ts'), file] as const))('%s is rejected for its named reason', { timeout: 120_000 }, async ([, file]) => {
      const [tag, reason] = tagOf(file)!;
      if (tag === 'probe') {
        const [server] = (await probed(() => runBench(exercise, [wrongSpec(file)], { checkOnly: true }))).servers;
        expect(server!.failure, `should start and answer: ${server!.failure}\n${server!.output}`).toBeUndefined();
        expect(server!.check?.ok, 'passed the correctness probe').toBe(false);
        expect(server!.check!.failures.join('\n')).toContain(reason);
        return;
      }
      const [server] = (await loaded(() => runBench(brief, [wrongSpec(file)], { judge: false }))).servers;
      expect(server!.failure, `should start and answer: ${server!.failure}\n${server!.output}`).toBeUndefined();
      expect(server!.check?.ok, `should pass the probe before the load: ${server!.check?.failures.join('; ')}`).toBe(true);
      if (tag === 'under-load') {
        const problems = honestyProblems(server!).filter((p) => p.startsWith('under load') || p.startsWith('the correctness probe after the load'));
        expect(problems.join('\n'), 'was not rejected under load').toContain(reason);
      } else {
        expect(server!.afterLoad?.ok, `passed the after-load check: ${server!.afterLoad?.passed.join('; ')}`).toBe(false);
        expect(server!.afterLoad!.failures.join('\n')).toContain(reason);
      }
    });
  });
}
