// The services an exercise declares in its manifest (a real S3 server, a log file the probe can read, ...),
// started before its servers and stopped after them, each with its data in a temporary folder that goes
// with it. Every server run gets fresh state: its own bucket, its own log file.
//
// A new kind of service: a module with a start function returning a StartedService, a variant in the
// manifest's ServiceRequest, a field in ServiceContexts if probes need it, and a case in startOne below.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServiceRequest } from '../manifest.ts';
import { ServerStartError } from '../server-process.ts';
import { startLogFiles } from './log-file.ts';
import { startS3, type S3Context } from './s3.ts';
import { startBroker, type BrokerContext } from './broker.ts';
import { startStatsd, type StatsdContext } from './statsd.ts';
import { startRouteTables, type RouteTableContext } from './route-table.ts';

/** What a correctness probe may use of the services, for the server it is checking. */
export interface ServiceContexts {
  s3?: S3Context;
  /** The message broker and this server run's own topic, with a helper for its counts. */
  broker?: BrokerContext;
  /** The DNS server, StatsD sink and upstream of the statsd service, with helpers (counts, moveRecord). */
  statsd?: StatsdContext;
  /** The route table the server reads (ROUTES_FILE), and a way to change its routes. */
  routeTable?: RouteTableContext;
  /** The file the server was told to write its log lines to (LOG_FILE). */
  logFile?: string;
}

/** Fresh state for one server: the environment it gets and what its probe may look at. */
export interface PreparedService {
  env: Record<string, string>;
  contexts: ServiceContexts;
}

/** One running service, as each kind's module returns it. */
export interface StartedService {
  prepare(): Promise<PreparedService>;
  /** One line for `run` to print: what runs where. */
  describe(): string;
  stop(): Promise<void>;
}

export interface Services {
  /** Fresh state for the next server, from every service. */
  prepare(): Promise<PreparedService>;
  /** One line per service, for `run` to print. */
  describe(): string[];
  stop(): Promise<void>;
}

/** The name a start failure is reported under: "the S3 service (s3rver) did not start: ...". */
const NAMES: Record<ServiceRequest['kind'], string> = {
  s3: 'S3 service (s3rver)',
  broker: 'message broker (aedes)',
  statsd: 'StatsD service (DNS server, StatsD sink, upstream)',
  'route-table': 'route table service',
  'log-file': 'log file',
};

function startOne(request: ServiceRequest, folder: string): Promise<StartedService> {
  const data = path.join(folder, request.kind);
  switch (request.kind) {
    case 's3':
      return startS3(data, request);
    case 'broker':
      return startBroker(request);
    case 'statsd':
      return startStatsd(request);
    case 'route-table':
      return startRouteTables(data, request);
    case 'log-file':
      return startLogFiles(data);
  }
}

const liveFolders = new Set<string>();

/** Removes every service's data at once; for an 'exit' handler, when there is no time to stop in order. */
export function removeServiceDataNow(): void {
  for (const folder of liveFolders) rmSync(folder, { recursive: true, force: true });
  liveFolders.clear();
}

export async function startServices(requests: ServiceRequest[] = []): Promise<Services> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-services-'));
  liveFolders.add(folder);
  const started: StartedService[] = [];
  const stop = async () => {
    for (const service of [...started].reverse()) await service.stop();
    started.length = 0;
    rmSync(folder, { recursive: true, force: true });
    liveFolders.delete(folder);
  };
  try {
    for (const request of requests) {
      const service = await startOne(request, folder).catch((error: unknown) => {
        const why = error instanceof Error ? error.message : String(error);
        const output = error instanceof ServerStartError ? error.output : '';
        // A service's output is nowhere else to be seen: its last lines go into the message.
        const last = output.trim().split('\n').slice(-6).join('\n');
        throw new ServerStartError(`the ${NAMES[request.kind]} did not start: ${why}${last ? `\nit printed:\n${last}` : ''}`, output);
      });
      started.push(service);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    async prepare() {
      const prepared: PreparedService = { env: {}, contexts: {} };
      for (const service of started) {
        const { env, contexts } = await service.prepare();
        Object.assign(prepared.env, env);
        Object.assign(prepared.contexts, contexts);
      }
      return prepared;
    },
    describe: () => started.map((service) => service.describe()),
    stop,
  };
}
