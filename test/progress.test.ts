import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { specFor, UNREVEALED_STAGE } from '../scripts/bench.ts';
import { loadExercise } from '../scripts/exercises.ts';
import { exerciseProgress, readProgress, updateExercise } from '../scripts/progress.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hotpath-progress-'));
  file = path.join(dir, 'progress.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('progress file', () => {
  it('starts empty when the file is missing', () => {
    const { progress, warning } = readProgress(file);
    expect(warning).toBeUndefined();
    expect(exerciseProgress(progress, '01-x')).toEqual({ passed: false, hintsShown: 0, solutionShown: false });
  });

  it('keeps what is recorded', () => {
    updateExercise('01-x', (p) => ({ ...p, hintsShown: 2 }), file);
    updateExercise('01-x', (p) => ({ ...p, passed: true }), file);
    expect(exerciseProgress(readProgress(file).progress, '01-x')).toMatchObject({ passed: true, hintsShown: 2 });
    expect(readdirSync(dir)).toEqual(['progress.json']); // no temporary file left behind
  });

  it('keeps the progress of a file written under the former ids, under the new ones', () => {
    writeFileSync(file, JSON.stringify({ version: 1, exercises: { '01-etag-listener-leak': { passed: true, hintsShown: 1, solutionShown: false } } }));
    const { progress } = readProgress(file);
    expect(Object.keys(progress.exercises)).toEqual(['01-seed-service-slows-down']);
    expect(exerciseProgress(progress, '01-seed-service-slows-down')).toMatchObject({ passed: true, hintsShown: 1 });
  });

  it('survives a corrupt file: warns, sets it aside, starts afresh', () => {
    writeFileSync(file, '{"version": 1, "exercises": {"01-x": {"pass');
    const { progress, warning } = readProgress(file);
    expect(warning).toMatch(/could not be read/);
    expect(progress.exercises).toEqual({});
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(dir).some((f) => f.startsWith('progress.json.corrupt-'))).toBe(true);
    updateExercise('01-x', (p) => ({ ...p, passed: true }), file);
    expect(JSON.parse(readFileSync(file, 'utf8')).exercises['01-x'].passed).toBe(true);
  });

  it('survives a file of the wrong shape and cleans bad fields', () => {
    writeFileSync(file, JSON.stringify([1, 2, 3]));
    expect(readProgress(file).warning).toMatch(/unknown shape/);
    writeFileSync(file, JSON.stringify({ version: 1, exercises: { '01-x': { passed: 'yes', hintsShown: -4 } } }));
    expect(exerciseProgress(readProgress(file).progress, '01-x')).toEqual({ passed: false, hintsShown: 0, solutionShown: false, passedAt: undefined });
  });

  it("keeps a reference stage's title, which names its fix, until a pass or the solution was shown", async () => {
    const exercise = await loadExercise('01-seed-service-slows-down');
    const saved = process.env.HOTPATH_PROGRESS_FILE;
    process.env.HOTPATH_PROGRESS_FILE = file;
    try {
      expect(specFor(exercise, 1).run.title).toBe(UNREVEALED_STAGE);
      expect(specFor(exercise, 'broken').run.title).toBe('as shipped');
      updateExercise(exercise.manifest.id, (p) => ({ ...p, hintsShown: 5 }), file);
      expect(specFor(exercise, 1).run.title).toBe(UNREVEALED_STAGE);
      updateExercise(exercise.manifest.id, (p) => ({ ...p, solutionShown: true }), file);
      expect(specFor(exercise, 1).run.title).toBe(exercise.manifest.stages[0]!.title);
      expect(specFor(exercise, 2, false).run.title).toBe(UNREVEALED_STAGE);
    } finally {
      if (saved === undefined) delete process.env.HOTPATH_PROGRESS_FILE;
      else process.env.HOTPATH_PROGRESS_FILE = saved;
    }
  });
});
