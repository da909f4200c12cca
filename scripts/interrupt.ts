// Work a long-running command must finish when Ctrl-C (or SIGTERM) arrives, before the CLI ends its
// servers and exits: the hub cancels its live run and says what it stopped.
const hooks: Array<() => Promise<void>> = [];

export function onInterrupt(hook: () => Promise<void>): void {
  hooks.push(hook);
}

export function hasInterruptHooks(): boolean {
  return hooks.length > 0;
}

/** Runs every hook; one that fails does not keep the others from running. */
export async function runInterruptHooks(): Promise<void> {
  await Promise.allSettled(hooks.map((hook) => hook()));
}
