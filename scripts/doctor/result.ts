// The doctor's result: what it observed, in short, its figures and its findings (the JSON of `doctor
// --json`, kept under .hotpath/results/ and shown by the hub).
import { diagnose, type DoctorFigures, type Finding } from './diagnose.ts';
import type { Observation } from './observe.ts';

export interface DoctorResult {
  exercise: string;
  startedAt: string;
  server: { label: string; file: string };
  node: string;
  cores: number;
  load: { connections: number; seconds: number; requestsPerSecond: number[] };
  failure?: string;
  figures?: DoctorFigures;
  /** Empty: no problem found. */
  findings: Finding[];
}

export function doctorResult(observation: Observation, seconds: number, startedAt = new Date().toISOString()): DoctorResult {
  const base = {
    exercise: observation.exercise,
    startedAt,
    server: { label: observation.label, file: observation.file },
    node: observation.node,
    cores: observation.cores,
    load: { connections: observation.connections, seconds, requestsPerSecond: observation.loadSeconds.map((s) => s.requests) },
  };
  if (observation.failure) return { ...base, failure: observation.failure, findings: [] };
  const { figures, findings } = diagnose(observation);
  return { ...base, figures, findings };
}

