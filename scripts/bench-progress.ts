// Shows a bench's progress on stderr: one line rewritten in place on a terminal, a line per step elsewhere.
import type { BenchEvent } from './bench.ts';
import { integer } from './format.ts';

export function benchProgress(stream: NodeJS.WriteStream = process.stderr): (event: BenchEvent) => void {
  const live = stream.isTTY === true;
  let position = '';
  // Servers ramped side by side interleave their events: each line names the server it is about.
  const positions = new Map<string, string>();
  const at = (label: string) => (position = positions.get(label) ?? position);
  const write = (text: string, final = false) => {
    if (live) stream.write(`\r\u001b[2K${text}${final ? '\n' : ''}`);
    else if (final) stream.write(`${text}\n`);
  };
  return (event) => {
    if (event.type === 'services') stream.write(`starting services: ${event.names.join(', ')}\n`);
    if (event.type === 'repeat') stream.write(`run ${event.index + 1} of ${event.of}\n`);
    if (event.type === 'checked' || event.type === 'load' || event.type === 'after-load') at(event.label);
    if (event.type === 'done') at(event.run.label);
    if (event.type === 'after-load') write(`${position}: checking what the load left behind`);
    if (event.type === 'starting') {
      position = `[${event.index + 1}/${event.of}] ${event.label}`;
      positions.set(event.label, position);
      write(`${position}: starting`);
      if (!live) stream.write(`${position}: starting\n`);
    }
    if (event.type === 'checked') write(`${position}: correctness probe ${event.ok ? 'passed' : 'FAILED'}`, !event.ok);
    if (event.type === 'load') {
      const { phase, second, of, requestsLastSecond } = event.progress;
      // A line to keep (a soak's window as it closes) goes above the line rewritten in place.
      if (event.progress.note) live ? write(`${position}: ${event.progress.note}`, true) : stream.write(`${position}: ${event.progress.note}\n`);
      const detail = event.progress.detail ? ` · ${event.progress.detail}` : '';
      write(`${position}: ${phase} ${second}/${of} s${detail} · ${integer(requestsLastSecond)} req in the last second`);
      if (!live && second === 1) stream.write(`${position}: ${phase} (${of} s)\n`);
    }
    if (event.type === 'done') {
      const { load, check } = event.run;
      const rps = load ? `${integer(load.requestsPerSecond.mean)} req/s` : check?.ok ? 'answers correctly' : 'not measured';
      write(`${position}: ${event.run.failure ? `failed: ${event.run.failure.split('\n')[0]}` : `done, ${rps}`}`, true);
    }
  };
}
