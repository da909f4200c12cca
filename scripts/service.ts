// A service a manifest brings (a real S3, a message broker, a DNS server...), as a value: a factory the
// harness starts before the servers and stops after them. The workshop's own are in services/, one a
// file; a team's config or a test defines more the same way, and no harness file changes.

export interface Service<Context = unknown> {
  /** How progress lines and failures name it: "S3 service (s3rver)". */
  name: string;
  /** Starts one instance, with `folder` (empty, removed after stop) for its data. Servers in turns get one each. */
  start(folder: string): Promise<StartedService<Context>>;
}

export interface StartedService<Context = unknown> {
  /** Fresh state for the next server: the environment it starts with, and what its probes may use. */
  prepare(): Promise<{ env: Record<string, string>; context: Context }>;
  /** One line for `run` to print: what runs where. */
  describe(): string;
  stop(): Promise<void>;
}

export function defineService<Context>(service: Service<Context>): Service<Context> {
  return service;
}

/** What a correctness probe may use of the services, for the server it checks: each one's context, asked for by the service. */
export class ServiceContexts {
  readonly #contexts = new Map<Service<unknown>, unknown>();

  set<Context>(service: Service<Context>, context: Context): void {
    this.#contexts.set(service as Service<unknown>, context);
  }

  /** The context of this service for the server being checked, or undefined when the manifest does not bring it. */
  get<Context>(service: Service<Context>): Context | undefined {
    return this.#contexts.get(service as Service<unknown>) as Context | undefined;
  }
}
