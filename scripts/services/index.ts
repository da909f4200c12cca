// Starts the services a manifest brings (see ../service.ts) before its servers and stops them after, each
// with its data in a temporary folder that goes with it. Every server run gets fresh state: its own
// bucket, its own log file. Which services there are is the manifest's business, not this module's.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServerStartError } from '../server-process.ts';
import { ServiceContexts, type Service, type StartedService } from '../service.ts';

/** Fresh state for one server: the environment it gets and what its probe may look at. */
export interface PreparedService {
  env: Record<string, string>;
  contexts: ServiceContexts;
}

export interface Services {
  /** Fresh state for the next server, from every service. */
  prepare(): Promise<PreparedService>;
  /** One line per service, for `run` to print. */
  describe(): string[];
  stop(): Promise<void>;
}

const liveFolders = new Set<string>();

/** Removes every service's data at once; for an 'exit' handler, when there is no time to stop in order. */
export function removeServiceDataNow(): void {
  for (const folder of liveFolders) rmSync(folder, { recursive: true, force: true });
  liveFolders.clear();
}

export async function startServices(services: readonly Service<unknown>[] = []): Promise<Services> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-services-'));
  liveFolders.add(folder);
  const started: Array<{ service: Service<unknown>; running: StartedService<unknown> }> = [];
  const stop = async () => {
    for (const { running } of [...started].reverse()) await running.stop();
    started.length = 0;
    rmSync(folder, { recursive: true, force: true });
    liveFolders.delete(folder);
  };
  try {
    for (const [index, service] of services.entries()) {
      const data = path.join(folder, String(index + 1));
      mkdirSync(data);
      const running = await service.start(data).catch((error: unknown) => {
        const why = error instanceof Error ? error.message : String(error);
        const output = error instanceof ServerStartError ? error.output : '';
        // A service's output is nowhere else to be seen: its last lines go into the message.
        const last = output.trim().split('\n').slice(-6).join('\n');
        throw new ServerStartError(`the ${service.name} did not start: ${why}${last ? `\nit printed:\n${last}` : ''}`, output);
      });
      started.push({ service, running });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    async prepare() {
      const prepared: PreparedService = { env: {}, contexts: new ServiceContexts() };
      for (const { service, running } of started) {
        const { env, context } = await running.prepare();
        Object.assign(prepared.env, env);
        prepared.contexts.set(service, context);
      }
      return prepared;
    },
    describe: () => started.map(({ running }) => running.describe()),
    stop,
  };
}
