// What `profile` says about a profile. How to read the tool's picture, always; what this exercise's
// profile shows (its frames, by name), only once the trainee has opened enough hints or passed (the
// trainee does the diagnosis: the answer is not printed before the work), and only for the tool whose
// picture the frames were checked in.
import type { Exercise } from '../exercises.ts';
import { exerciseProgress, readProgress } from '../progress.ts';
import type { ProfileTool } from './tools.ts';

/** The hint a trainee must have opened before `profile` names the exercise's frames. */
export const ADVICE_AFTER_HINT = 2;

const READING: Record<ProfileTool, string> = {
  flame:
    "Each block is a function; its width is the share of CPU samples spent in it and in what it called, and the stack grows upwards from the entry point, so the top edge is where the time was spent. Ask whether the widest stacks belong to answering the request. Merge folds a function's optimized and unoptimized copies together; the V8 and cpp filters show native work. clinic labels the app's frames by their position in the code tsx produced (server.ts:1:<column>), not by .ts line: `--tool cpu` maps frames back to lines of the .ts file.",
  cpu: "Each block is a function, at a line of the .ts file you edit (mapped through tsx's source maps); its width is the share of samples in it and below it, and its self time what it spent itself. Hover for the figures, click to zoom, search to highlight every frame of a name. (garbage collector) is time in the collector, (idle) the loop waiting, (program) native work outside JavaScript. Ask whether the widest stacks belong to answering the request.",
  doctor:
    "clinic doctor draws CPU usage, memory, event-loop delay and active handles over the run, and names the kind of problem it sees (I/O, event loop, GC, or none). Read its graphs against the load's timeline: a loop delay that grows while CPU stays high points at synchronous work; memory that climbs and never comes back points at something kept. Its diagnosis is clinic's, not the workshop's.",
  heap: "clinic heapprofiler draws where memory was allocated: each block's width is the bytes allocated by a function and what it called, during the run. The widest blocks near the top are the allocation sites; ask which of them belong to work that should have been short-lived.",
};

/** How to read the picture of `tool`, for any exercise. */
export function readingAdvice(tool: ProfileTool): string {
  return READING[tool];
}

/**
 * The exercise's own advice (its frames, by name) when the trainee may read it: after a pass, or once
 * hint ADVICE_AFTER_HINT has been opened, and only for `--tool cpu`, the tool its frames are checked in
 * (test/diagnosis.test.ts); another tool's picture gets a note that says so. Otherwise `locked`
 * says how to get it.
 */
export function exerciseAdvice(exercise: Exercise, tool: ProfileTool, progressFile?: string): { text?: string; locked?: string } {
  const lookFor = exercise.manifest.profile?.lookFor;
  if (!lookFor) return {};
  const id = exercise.manifest.id.slice(0, 2);
  const { progress } = readProgress(progressFile);
  const mine = exerciseProgress(progress, exercise.manifest.id);
  if (!(mine.passed || mine.hintsShown >= ADVICE_AFTER_HINT)) {
    return { locked: `What this exercise's profile shows, frame by frame, comes with hint ${ADVICE_AFTER_HINT} (npm run workshop -- hint ${id}) or after a pass.` };
  }
  if (tool !== 'cpu') {
    return { locked: `What this exercise's profile shows is named frame by frame for --tool cpu, the picture it is checked against on Node 20 and 24 (npm run workshop -- profile ${id} --tool cpu).` };
  }
  return { text: lookFor };
}
