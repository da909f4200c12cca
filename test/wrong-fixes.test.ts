// Known-wrong fixes, part of the author check: each file in test/wrong-fixes/NN-*/ names the failure it
// must trip (`// probe: ...` before any load, `// under-load: ...` for what the load receives or the probe
// finds after it, or a thread or process the probe could not see, `// after-load: ...` for what only shows after
// work), and is rejected for that reason.
// Those tagged `// verdict: ...` answer right and miss a target of the goal, and those tagged
// `// between-turns: ...` work while the other servers take their turns: author.test.ts judges them.
// Rejecting one is a matter of what it answers, not of its speed, and most of their time is waiting (for
// uploads, metrics, a moved DNS record): they run several at a time, each with services of its own. The
// ones put under load must each get enough requests to change or to fall behind: on a slower machine,
// eight loaded at once left 08's fire-and-forget too few to pile up, so at most three loads run at once
// (a load is its warm-up and measured phase: the probes and after-load checks around it wait freely),
// while the ones judged by the probe alone fill the rest (maxConcurrency in vitest.config.ts).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBench } from '../scripts/bench.ts';
import { loadAllExercises } from '../scripts/exercises.ts';
import { turnLoad } from '../scripts/steady-turns.ts';
import { honestyProblems } from '../scripts/verdict.ts';
import { IN_TURNS_TAGS, WRONG_FIX_TAGS, wrongFixFiles, wrongFixRate, wrongFixSeconds, wrongFixSpec, wrongFixTag } from './helpers.ts';

const exercises = await loadAllExercises();

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

for (const exercise of exercises) {
  const { id } = exercise.manifest;
  const files = wrongFixFiles(id);
  // A wrong fix that misses a target of the goal is judged in the author check's run, beside the references.
  const rejectedHere = files.filter((file) => !IN_TURNS_TAGS.includes(wrongFixTag(file)?.[0] ?? 'probe'));
  // A short steady load is enough to trip them: they change behaviour after at most 200 requests, or lose
  // work. Each N sits far below what its load answers while it shares the machine, on the slower machines
  // too (docs/suite-runs.md). No ramp and at most 1,500 req/s: a wrong fix is not judged on speed.
  const { ramp: _ramp, ...steady } = turnLoad(exercise.manifest.load);
  const brief = { ...exercise, manifest: { ...exercise.manifest, load: { ...steady, rate: 1500, warmupSeconds: 0.5, durationSeconds: 2 } } };

  describe.concurrent(`known-wrong fixes: ${id}`, () => {
    it('has at least 3, each naming what rejects it', () => {
      expect(files.length).toBeGreaterThanOrEqual(3);
      const tags = WRONG_FIX_TAGS.map((tag) => `// ${tag}:`).join(', ');
      for (const file of files) expect(wrongFixTag(file), `${path.basename(file)} has none of the lines ${tags}`).toBeDefined();
    });

    it.for(rejectedHere.map((file) => [path.basename(file, '.ts'), file] as const))('%s is rejected for its named reason', { timeout: 120_000 }, async ([, file]) => {
      const [tag, named] = wrongFixTag(file)!;
      // A file may name two reasons (`a | b`) where its mechanism shows as either, by how much load it got.
      const reasons = named.split(' | ');
      if (tag === 'probe') {
        const [server] = (await probed(() => runBench(exercise, [wrongFixSpec(exercise, file)], { checkOnly: true }))).servers;
        expect(server!.failure, `should start and answer: ${server!.failure}\n${server!.output}`).toBeUndefined();
        expect(server!.check?.ok, 'passed the correctness probe').toBe(false);
        expect(reasons.some((reason) => server!.check!.failures.join('\n').includes(reason)), `${server!.check!.failures.join('; ')} names none of: ${named}`).toBe(true);
        return;
      }
      // A fix whose failure only shows once the server has aged asks for a longer measured phase.
      const seconds = wrongFixSeconds(file) ?? brief.manifest.load.durationSeconds;
      // And one that ages by the clock needs no more requests for it: a lower rate spares the cores.
      const rate = wrongFixRate(file) ?? brief.manifest.load.rate;
      const aged = { ...brief, manifest: { ...brief.manifest, load: { ...brief.manifest.load, durationSeconds: seconds, rate } } };
      const [server] = (await runBench(aged, [wrongFixSpec(exercise, file)], { judge: false, loadSlot: loaded })).servers;
      expect(server!.failure, `should start and answer: ${server!.failure}\n${server!.output}`).toBeUndefined();
      expect(server!.check?.ok, `should pass the probe before the load: ${server!.check?.failures.join('; ')}`).toBe(true);
      // How far the load got: a fix that changes after N requests is only seen by a load that gets past N.
      const reached = `${server!.load?.answered} answered, ${server!.answers?.sampled} of them sampled`;
      if (tag === 'under-load') {
        const problems = honestyProblems(server!).filter(
          (p) =>
            p.startsWith('under load') ||
            p.startsWith('the correctness probe after the load') ||
            p.startsWith('worker threads the probe could not see') ||
            p.startsWith('processes the probe could not see'),
        );
        expect(reasons.some((reason) => problems.join('\n').includes(reason)), `was not rejected under load (${reached}) for: ${named}; its problems: ${honestyProblems(server!).join('; ') || 'none'}`).toBe(true);
      } else {
        expect(server!.afterLoad?.ok, `passed the after-load check (${reached}): ${server!.afterLoad?.passed.join('; ')}`).toBe(false);
        const failures = server!.afterLoad!.failures.join('\n');
        expect(reasons.some((reason) => failures.includes(reason)), `rejected, but not for its named reason (${reached}): ${failures}`).toBe(true);
      }
    });
  });
}
