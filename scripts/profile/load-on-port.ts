// Run by clinic's --on-port once the profiled server listens: puts the exercise's load on it (the same
// warm-up and measured phase as `verify`, through runLoad) and reports to the profile command on stdout,
// which clinic passes through, one JSON line per event.
// Environment: PORT (set by clinic to the port the server listens on), HOTPATH_PROFILE_LOAD (the manifest's load).
import { runLoad } from '../load.ts';
import type { LoadProfile } from '../manifest.ts';
import { LOAD_LINE, type LoadEvent } from './clinic.ts';

function report(event: LoadEvent): void {
  process.stdout.write(`${LOAD_LINE}${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT);
  const profile = JSON.parse(process.env.HOTPATH_PROFILE_LOAD ?? 'null') as LoadProfile | null;
  if (!Number.isInteger(port) || port <= 0 || !profile) throw new Error('needs PORT and HOTPATH_PROFILE_LOAD in its environment');
  const result = await runLoad(`http://127.0.0.1:${port}`, profile, (progress) => report({ type: 'progress', progress }));
  report({ type: 'done', result });
}

main().catch((error: unknown) => {
  report({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
});
