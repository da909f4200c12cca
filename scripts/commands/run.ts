import { benchProgress } from '../bench-progress.ts';
import { runBench, specFor, type ServerChoice } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim } from '../format.ts';
import { renderJson, renderReport } from '../report.ts';
import { startServer } from '../server-process.ts';
import { startServices } from '../services/index.ts';

export interface RunOptions {
  choice: ServerChoice;
  port: number;
  load: boolean;
  json: boolean;
  nodeFlags: string[];
}

/** Starts one server and prints its URL until Ctrl-C, or with --load measures it once and stops. */
export async function run(exercise: Exercise, options: RunOptions): Promise<number> {
  const spec = specFor(exercise, options.choice);
  if (options.load) {
    const report = await runBench(exercise, [spec], { onEvent: benchProgress(), extraNodeFlags: options.nodeFlags, judge: false });
    process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
    return report.pass ? 0 : 1;
  }
  const services = await startServices(exercise.manifest.services);
  try {
    const { env } = await services.prepare();
    const nodeFlags = [...spec.run.nodeFlags, ...options.nodeFlags];
    const server = await startServer(spec.absoluteFile, { port: options.port, nodeFlags, env, echo: true });
    const { load } = exercise.manifest;
    const method = load.method && load.method !== 'GET' ? ` -m ${load.method}` : '';
    process.stderr.write(
      `${bold(`${spec.run.label} (${spec.run.file})`)} is listening on ${bold(server.url + load.path)}\n` +
        (nodeFlags.length > 0 ? dim(`Node flags: ${nodeFlags.join(' ')}\n`) : '') +
        services.describe().map((line) => dim(`${line}\n`)).join('') +
        dim(`Try: curl -i${method} ${server.url}${load.path}    Load it: npx autocannon${method} -c ${load.connections} -d ${load.durationSeconds} ${server.url}${load.path}\n`) +
        dim('Ctrl-C stops it.\n'),
    );
    const exit = await server.exited;
    process.stderr.write(`the server exited (${exit.signal ?? `exit code ${exit.code}`})\n`);
    return exit.code === 0 ? 0 : 1;
  } finally {
    await services.stop();
  }
}
