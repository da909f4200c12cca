// `workshop doctor <ex>`: one server under the exercise's load, and the kinds of problem its figures
// show, with the evidence and the tool to use next (scripts/doctor/). It names kinds, never a fix.
import { benchProgress } from '../bench-progress.ts';
import type { ServerChoice } from '../bench.ts';
import type { DoctorResult } from '../doctor/result.ts';
import { runDoctor } from '../doctor/run-doctor.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim, integer, percent, sparkline, yellow } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { writeDoctorResult } from '../results.ts';

export interface DoctorOptions {
  choice: ServerChoice;
  json: boolean;
}

export async function doctor(exercise: Exercise, options: DoctorOptions): Promise<number> {
  const progress = benchProgress();
  const result = await runDoctor(exercise, options.choice, (event) =>
    progress(event.type === 'starting' || event.type === 'load' ? { ...event, label: `${event.label} for the doctor` } : event),
  );
  process.stderr.write('\n');
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
        f.utilization !== undefined ? `${f.workers.length > 0 ? "the primary's event loop" : 'event loop'} busy ${percent(f.utilization, 0)}` : undefined,
        f.delayP99 !== undefined ? `loop delay p99 ${integer(f.delayP99)} ms` : undefined,
        `CPU ${f.cores.toFixed(2)} of ${result.cores} cores${f.processCores.length > 1 ? ` over ${f.processCores.length} processes` : ''}`,
        f.gcShare !== undefined ? `GC ${percent(f.gcShare, 0)} of the time` : undefined,
        f.heapMBps !== undefined ? `heap kept ${f.heapMBps >= 0 ? '+' : ''}${f.heapMBps.toFixed(1)} MB/s` : undefined,
        f.p99Late !== undefined ? `p99 ${integer(f.p99Late)} ms at the end` : undefined,
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    ...(f.workers.length > 0
      ? [dim(`${f.workers.length} workers: ${f.workers.map((w) => `${w.pid} loop busy ${percent(w.utilization, 0)}, ${w.cores.toFixed(2)} cores`).join(' · ')}`)]
      : []),
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
