import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAllExercises } from '../scripts/exercises.ts';
import { ADVICE_AFTER_HINT, exerciseAdvice, readingAdvice } from '../scripts/profile/advice.ts';
import { TOOLS } from '../scripts/profile/tools.ts';
import { tempFolder } from './temp-folder.ts';

const dir = tempFolder('hotpath-advice-');

function progressWith(entry: object): string {
  const file = path.join(dir(), `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ version: 1, exercises: { '01-seed-service-slows-down': entry } }));
  return file;
}

describe("profile's advice", () => {
  it('says how to read every tool, and where clinic cannot name .ts lines', () => {
    for (const tool of TOOLS) expect(readingAdvice(tool).length).toBeGreaterThan(80);
    expect(readingAdvice('flame')).toContain('server.ts:1:<column>');
    expect(readingAdvice('cpu')).toContain('.ts file');
  });

  it("names the exercise's frames only after its hint or a pass, and says how to get them before", async () => {
    const exercise = (await loadAllExercises()).find((e) => e.manifest.id.startsWith('01-'))!;
    const lookFor = exercise.manifest.profile!.lookFor;
    const before = exerciseAdvice(exercise, 'cpu', progressWith({ passed: false, hintsShown: ADVICE_AFTER_HINT - 1, solutionShown: false }));
    expect(before.text).toBeUndefined();
    expect(before.locked).toContain(`hint ${ADVICE_AFTER_HINT} (npm run workshop -- hint 01)`);
    expect(exerciseAdvice(exercise, 'cpu', progressWith({ passed: false, hintsShown: ADVICE_AFTER_HINT, solutionShown: false })).text).toBe(lookFor);
    expect(exerciseAdvice(exercise, 'cpu', progressWith({ passed: true, hintsShown: 0, solutionShown: false })).text).toBe(lookFor);
    expect(exerciseAdvice(exercise, 'cpu', path.join(dir(), 'none.json')).locked).toBeDefined();
  });

  it("names the exercise's frames only for --tool cpu, where they are checked, and says so for the other tools", async () => {
    const exercises = await loadAllExercises();
    const passed = progressWith({ passed: true, hintsShown: 0, solutionShown: false });
    for (const exercise of exercises.filter((e) => e.manifest.id.startsWith('01-'))) {
      for (const tool of TOOLS.filter((t) => t !== 'cpu')) {
        const advice = exerciseAdvice(exercise, tool, passed);
        expect(advice.text).toBeUndefined();
        expect(advice.locked).toContain('npm run workshop -- profile 01 --tool cpu');
      }
    }
    // Every exercise's advice is for cpu, and each names frames that test/diagnosis.test.ts checks.
    for (const { manifest } of exercises) {
      expect(manifest.profile?.frames?.length, manifest.id).toBeGreaterThan(0);
      expect(manifest.profile!.lookFor, manifest.id).not.toMatch(/\b(use|in) (heap|flame|doctor)\b|clinic heapprofiler|\(or flame\)/i);
    }
  });
});
