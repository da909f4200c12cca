// What a bench is asked to measure and how, and what it reports as it goes. Apart from bench.ts so that the
// modules that measure (measure-*.ts) can take them without importing the bench that calls them.
import type { CommandStart } from './command-start.ts';
import type { LoadProgress } from './load.ts';
import type { RampRequest } from './ramp.ts';
import type { ServerRun } from './result.ts';
import type { SoakOptions } from './soak.ts';

export type ServerChoice = 'broken' | 'mine' | 'ceiling' | number;

export interface ServerSpec {
  run: Omit<ServerRun, 'check' | 'load' | 'runtime' | 'failure' | 'output'>;
  absoluteFile: string;
  /** A server started by a shell command instead of Node on absoluteFile (`workshop measure`). */
  command?: CommandStart;
}

export type BenchEvent =
  | { type: 'services'; names: string[] }
  | { type: 'starting'; label: string; index: number; of: number }
  | { type: 'checked'; label: string; ok: boolean }
  | { type: 'after-load'; label: string }
  | { type: 'load'; label: string; progress: LoadProgress }
  | { type: 'done'; run: ServerRun }
  /** Before each run of `--runs N`. */
  | { type: 'repeat'; index: number; of: number };

export interface BenchOptions {
  /** Only start each server and run the correctness probe: no load. */
  checkOnly?: boolean;
  /** Judge the stages and the trainee's file against their targets (default). Off for a plain `run --load`. */
  judge?: boolean;
  extraNodeFlags?: string[];
  onEvent?: (event: BenchEvent) => void;
  /**
   * How to load each server: the manifest's load (default: steady, or its ramp when it has one), a ramp
   * (`run --ramp`), or a soak (`run --soak`). The warm-up always comes first.
   */
  measure?: { kind: 'ramp'; ramp: RampRequest } | { kind: 'soak'; soak: SoakOptions };
  /** Keep a steady load's figures second by second over both phases (ServerRun.seconds), for the doctor's line in `run --load`. */
  seconds?: boolean;
  /**
   * Runs a steady load (warm-up and measured phase) when the caller lets it: several runs at once share a
   * few slots for their loads, while their probes and after-load checks, which mostly wait, run freely.
   * Default: at once.
   */
  loadSlot?: <T>(load: () => Promise<T>) => Promise<T>;
}

/** The load's progress on one server, as the bench's events. */
export function loadEvents(options: BenchOptions, label: string): (progress: LoadProgress) => void {
  return (progress) => options.onEvent?.({ type: 'load', label, progress });
}
