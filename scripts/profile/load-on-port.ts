// Run by clinic's --on-port once the profiled server listens: puts the exercise's load on it (the same
// warm-up and measured phase as `verify`, through runLoad) and reports to the profile command on stdout,
// which clinic passes through, one JSON line per event.
// Environment: PORT (set by clinic to the port the server listens on), HOTPATH_PROFILE_LOAD (the manifest's load).
import { runLoad } from '../load.ts';
import type { LoadProfile } from '../manifest.ts';
import { LOAD_LINE, type LoadEvent } from './clinic.ts';

/** Whether the done or error event went out: the one the profile command waits for. */
let reported = false;

function report(event: LoadEvent): void {
  if (event.type !== 'progress') reported = true;
  process.stdout.write(`${LOAD_LINE}${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT);
  const profile = JSON.parse(process.env.HOTPATH_PROFILE_LOAD ?? 'null') as LoadProfile | null;
  if (!Number.isInteger(port) || port <= 0 || !profile) throw new Error('needs PORT and HOTPATH_PROFILE_LOAD in its environment');
  const result = await runLoad(`http://127.0.0.1:${port}`, profile, (progress) => report({ type: 'progress', progress }));
  report({ type: 'done', result });
}

function fail(error: unknown): void {
  report({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
}

// clinic ends the profile when this process ends, whatever its exit code: an error thrown outside main's
// promise (in a load callback) must reach the profile command as one too, not as a profile without a load.
process.on('uncaughtException', (error) => {
  fail(error);
  process.exit();
});
process.on('unhandledRejection', (error) => {
  fail(error);
  process.exit();
});
// A promise nothing keeps alive ends the process quietly, with code 0: that is a failure too.
process.on('exit', (code) => {
  if (!reported) fail(new Error(`the load script ended before its load did (exit code ${code})`));
});
main().catch(fail);
