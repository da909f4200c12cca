// `workshop doctor <ex>`: one server under the exercise's load, and the kinds of problem its figures
// show, with the evidence and the tool to use next (scripts/doctor/). It names kinds, never a fix.
import { benchProgress } from '../bench-progress.ts';
import { specFor, type ServerChoice } from '../bench.ts';
import { observe } from '../doctor/observe.ts';
import { doctorResult, type DoctorResult } from '../doctor/result.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim, integer, percent, sparkline, yellow } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { writeDoctorResult } from '../results.ts';

export interface DoctorOptions {
  choice: ServerChoice;
  json: boolean;
}

export async function doctor(exercise: Exercise, options: DoctorOptions): Promise<number> {
  const startedAt = new Date().toISOString();
  const spec = specFor(exercise, options.choice);
  const progress = benchProgress();
  const { load } = exercise.manifest;
  progress({ type: 'starting', label: `${spec.run.label} for the doctor`, index: 0, of: 1 });
  const observation = await observe(exercise, spec, { onProgress: (p) => progress({ type: 'load', label: `${spec.run.label} for the doctor`, progress: p }) });
  process.stderr.write('\n');
  const result = doctorResult(observation, load.warmupSeconds + load.durationSeconds, startedAt);
  process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${renderDoctor(result)}\n`);
  // With --json, on stderr, so stdout stays one JSON document.
  (options.json ? process.stderr : process.stdout).write(dim(`\nresult: ${relativeToRoot(writeDoctorResult(result))}\n`));
  return result.failure ? 1 : 0;
}

export function renderDoctor(result: DoctorResult): string {
  const lines = [
    bold(`doctor ${result.exercise} · ${result.server.label} (${result.server.file})`),
    dim(`Node ${result.node} · ${result.cores} cores · ${result.load.connections} connections, ${result.load.seconds} s of load (warm-up and measured), second by second`),
  ];
  if (result.failure) return [...lines, '', yellow(`Not observed: ${result.failure}`)].join('\n');
  const f = result.figures!;
  lines.push(
    '',
    `req/s, second by second: ${sparkline(result.load.requestsPerSecond)}  ${integer(f.early)} at first, ${integer(f.late)} at the end`,
    dim(
      [
        f.utilization !== undefined ? `event loop busy ${percent(f.utilization, 0)}` : undefined,
        f.delayP99 !== undefined ? `loop delay p99 ${integer(f.delayP99)} ms` : undefined,
        `CPU ${f.cores.toFixed(2)} of ${result.cores} cores${f.processCores.length > 1 ? ` over ${f.processCores.length} processes` : ''}`,
        f.gcShare !== undefined ? `GC ${percent(f.gcShare, 0)} of the time` : undefined,
        f.heapMBps !== undefined ? `heap low points ${f.heapMBps >= 0 ? '+' : ''}${f.heapMBps.toFixed(1)} MB/s` : undefined,
        f.p99Late !== undefined ? `p99 ${integer(f.p99Late)} ms at the end` : undefined,
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    '',
  );
  if (result.findings.length === 0) {
    lines.push(bold('No problem found.'), dim('None of the kinds the doctor knows shows in these figures: see docs/doctor.md for what each needs.'));
    return lines.join('\n');
  }
  lines.push(bold(result.findings.length === 1 ? 'One kind of problem:' : `${result.findings.length} kinds of problem:`));
  result.findings.forEach((finding, i) => {
    lines.push('', bold(`${i + 1}. ${finding.title}`), ...finding.evidence.map((e) => `   - ${e}`), dim(`   Next: ${finding.next}`));
  });
  return lines.join('\n');
}
