// A figure a target can be set on, as a value a manifest brings: its name and unit, how it is read from a
// server's run, and how it is judged. The workshop's own are in metrics/, one a file; a team's config or a
// test can define more the same way, and no harness file changes.
import type { LoadProfile } from './load-profile.ts';
import type { ServerRun } from './result.ts';

export interface Metric {
  /** How a result's JSON and the messages name it: requestsPerSecond. */
  id: string;
  /** As the report shows it: "req/s", "p99 latency". */
  name: string;
  unit: string;
  /** What the figure means, in a line, and why it can read below zero where it can (`help figures`). */
  means: string;
  /** Which way is better. A target still sets its own bound (atLeast or atMost): a stage may show a bug on purpose. */
  better: 'higher' | 'lower';
  /**
   * 'reference': judged as a ratio to another server of the same run (the shipped one, a stage, the
   * ceiling, a baseline). 'itself': already a ratio of two moments of the server's own run, judged as it is.
   */
  judged: 'reference' | 'itself';
  /**
   * Whether it can be read from one turn of a run in turns (its load and probe figures): then a target on
   * it is judged round by round. A figure of the whole run (a ramp's knee) cannot.
   */
  perTurn: boolean;
  /** Its value in a server's run (or in one of its turns, see perTurn); undefined when the run did not measure it. */
  read(run: ServerRun): number | undefined;
  /** The value with its unit, for the report. */
  format(value: number): string;
  /** For a metric judged against itself: what its ratio was taken from, for the report. */
  detail?(run: ServerRun): string;
  /** What the load (or the manifest) lacks for this figure to be read, in words, or undefined when it has it. */
  needs?(load: LoadProfile, has: MetricInputs): string | undefined;
}

/** What a manifest brings beside its load that a metric may need. */
export interface MetricInputs {
  /** ExerciseManifest.finishedWork: a count of the work the services saw finished. */
  finishedWork: boolean;
}

export function defineMetric(metric: Metric): Metric {
  return metric;
}
