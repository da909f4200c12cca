// `workshop artillery <args...>`: the pinned Artillery, installed into .hotpath/tools/ on first use, with
// its telemetry off; every argument goes to it as given (`artillery run --output report.json script.yml`).
import { ARTILLERY_VERSION, ensureArtillery, runArtillery } from '../artillery/tool.ts';

export async function artilleryCommand(args: string[]): Promise<number> {
  await ensureArtillery();
  process.stderr.write(`artillery ${ARTILLERY_VERSION} (telemetry off): ${args.join(' ') || '--help'}\n`);
  const { code, signal } = await runArtillery(args.length > 0 ? args : ['--help']);
  if (signal) return 1;
  return code ?? 1;
}
