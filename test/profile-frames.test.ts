// The frames an exercise's profile advice names (`profile.frames` beside its `lookFor`, in
// solutions/NN/stages.ts) are there, at the share each claims, in `profile --tool cpu` of the shipped
// server on the Node version this runs on. It profiles nine servers, about two minutes, so it is
// not part of `npm test` (where it is skipped): CI runs it on Node 20 and 24, and by hand:
//   npm run test:frames                                      (this Node)
//   scripts/with-node.sh 24.22.3 npm run test:frames         (Node 24)
// Under load like the author check: run it alone, under the shared lock.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProfile } from '../scripts/commands/profile.ts';
import { loadAllExercises } from '../scripts/exercises.ts';
import { shareOf } from '../scripts/profile/cpu-tree.ts';
import { embeddedProfile } from '../scripts/profile/flame-html.ts';
import { liveServerCount } from '../scripts/server-process.ts';

const RUN = process.env.HOTPATH_PROFILE_FRAMES === '1';
const exercises = RUN ? await loadAllExercises() : [];

const percent = (share: number) => `${(100 * share).toFixed(1)}%`;

describe.runIf(RUN)(`profile advice, --tool cpu on Node ${process.versions.node}: the frames it names are there`, () => {
  let profilesDir: string;
  beforeAll(() => {
    profilesDir = mkdtempSync(path.join(tmpdir(), 'hotpath-frames-'));
  });
  afterAll(() => rmSync(profilesDir, { recursive: true, force: true }));

  it('every exercise whose advice names frames says at what share', () => {
    for (const { manifest } of exercises) {
      expect(manifest.profile?.frames?.length ?? 0, `${manifest.id}: profile.frames`).toBeGreaterThan(0);
      for (const claim of manifest.profile!.frames!) expect(manifest.profile!.lookFor, `${manifest.id}: lookFor names the frame`).toContain(claim.name ?? claim.file!);
    }
  });

  it.for(exercises.map((exercise) => [exercise.manifest.id, exercise] as const))('%s', { timeout: 120_000 }, async ([, exercise]) => {
    const { ramp: _ramp, ...steady } = exercise.manifest.load;
    // The exercise's own steady load, as `profile NN --tool cpu` runs it for a trainee.
    const steadyOnly = { ...exercise, manifest: { ...exercise.manifest, load: steady } };
    const result = await writeProfile(steadyOnly, { choice: 'broken', tool: 'cpu', traceWarnings: false, profilesDir });
    const { tree } = embeddedProfile(readFileSync(result.html, 'utf8'));
    const measured = exercise.manifest.profile!.frames!.map((claim) => ({ claim, share: shareOf(tree, claim) }));
    const what = (claim: { name?: string; file?: string }) => [claim.name, claim.file && `in ${claim.file}`].filter(Boolean).join(' ');
    console.log(`${exercise.manifest.id} on Node ${process.versions.node}: ${measured.map(({ claim, share }) => `${what(claim)} ${percent(share)} (claims >= ${percent(claim.atLeast)})`).join('; ')}`);
    for (const { claim, share } of measured) {
      expect(share, `${what(claim)}: ${percent(share)} of the samples, the advice claims at least ${percent(claim.atLeast)}`).toBeGreaterThanOrEqual(claim.atLeast);
    }
    expect(liveServerCount()).toBe(0);
  });
});
