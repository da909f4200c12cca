// `npm start`: the hub, the workshop in the browser. Prints its URL and how long it took to be ready;
// Ctrl-C ends any live run (and its servers) and the hub, and says what it stopped.
import { bold, dim, red } from '../format.ts';
import { DEFAULT_HUB_PORT, HubPortError, startHub } from '../hub/server.ts';
import { onInterrupt } from '../interrupt.ts';
import { UsageError } from '../usage-error.ts';

export function hubPortOption(value: string | true | undefined): number {
  if (value === undefined) return DEFAULT_HUB_PORT;
  const port = Number(value);
  if (value === true || !/^\d+$/.test(value) || port < 1 || port > 65535) {
    throw new UsageError(`--port must be a whole number from 1 to 65535, got "${value === true ? '' : value}"`);
  }
  return port;
}

export async function start(port: number): Promise<number> {
  let hub;
  try {
    hub = await startHub({ port });
  } catch (error) {
    if (error instanceof HubPortError) {
      process.stderr.write(`${red('error:')} ${error.message}, e.g. npm start -- --port ${port === DEFAULT_HUB_PORT ? DEFAULT_HUB_PORT + 1 : DEFAULT_HUB_PORT}\n`);
      return 1;
    }
    throw error;
  }
  // The first page loads every manifest; ask for it now so the hub is ready when it says so.
  const home = await fetch(`${hub.url}/`).catch((error: unknown) => error as Error);
  const readyIn = (performance.now() / 1000).toFixed(1);
  if (home instanceof Error || !home.ok) {
    const why = home instanceof Error ? home.message : `${home.status}: ${(await home.text()).slice(0, 500)}`;
    process.stderr.write(`${red('warning:')} the hub is up but its home page failed (${why})\n`);
  }
  process.stdout.write(
    [
      `${bold('Hot Path')} is ready at ${bold(hub.url)}  ${dim(`(${readyIn} s after start)`)}`,
      `  exercises and your progress: ${hub.url}/`,
      `  slides:                      ${hub.url}/slides`,
      dim('Open it in a browser. Live runs start from an exercise page or a slide. Ctrl-C stops the hub and every server it started.'),
      dim('The terminal workflow is still there: npm run workshop -- help (watch, verify, demo, ...).'),
      '',
    ].join('\n'),
  );
  onInterrupt(async () => {
    const run = hub.activeRun();
    if (run) process.stderr.write(`cancelling the live run of ${run.exercise.id} (${run.servers.map((s) => s.label).join(', ')})...\n`);
    await hub.close();
    const what = run ? `cancelled the live run of ${run.exercise.id} and stopped its servers` : 'no live run was in progress';
    process.stderr.write(`stopped the hub at ${hub.url}; ${what}.\n`);
  });
  return new Promise<number>(() => {});
}
