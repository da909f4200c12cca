// The one model of a run's result. The terminal table, --json and (later) the hub all render this.
import type { CheckResult } from './check.ts';
import type { LoadResult } from './load.ts';
import type { LoadProfile, Target } from './manifest.ts';
import type { RuntimeFigures } from './probe/messages.ts';
import type { HeapTrend } from './trend.ts';

export type Role = 'broken' | 'stage' | 'mine' | 'ceiling';

export interface ServerRun {
  role: Role;
  /** "broken", "stage 1", "mine", "ceiling". */
  label: string;
  /** Shown beside the label: the stage's title or the file. */
  title: string;
  /** Relative to the repository. */
  file: string;
  stage?: number;
  nodeFlags: string[];
  check?: CheckResult;
  load?: LoadResult;
  runtime?: RuntimeFigures;
  /** The heap's trend over the measured phase, from the probe's samples. */
  heap?: HeapTrend;
  /** The exercise's check after the load (e.g. every upload arrived), when it has one. */
  afterLoad?: CheckResult;
  /** Why this server could not be measured: it did not start, crashed, or failed its check. */
  failure?: string;
  /** What the server printed, kept when it failed. */
  output?: string;
}

export interface TargetResult {
  target: Target;
  /** e.g. "req/s vs broken". */
  name: string;
  referenceLabel: string;
  referenceValue?: number;
  value?: number;
  ratio?: number;
  /** The target in absolute units for this run: the ratio times the reference measured now. */
  requiredValue?: number;
  /** How far past the threshold, as a fraction: +0.5 is 50% better than needed, negative is short. */
  margin?: number;
  pass: boolean;
  /** Why it could not be judged, when it could not. */
  note?: string;
}

export interface ServerVerdict {
  label: string;
  pass: boolean;
  targets: TargetResult[];
  /** Everything that fails this server apart from its targets: errors, timeouts, non-2xx, a failed check. */
  problems: string[];
  /** Set when this stage's targets are not expected to hold on this Node version, with the reason. */
  notExpectedHere?: string;
  /** For a stage that is wrong on purpose (Stage.expectedToFail): whether it was rejected for the named reason. */
  expectedToFail?: { why: string; problem: string; rejected: boolean };
}

export interface RunReport {
  exercise: { id: string; title: string };
  node: string;
  startedAt: string;
  load: LoadProfile;
  servers: ServerRun[];
  verdicts: ServerVerdict[];
  /** True when every judged server passed. */
  pass: boolean;
}
