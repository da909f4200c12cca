// The exercises' former ids. They named the bug; the ids now name what a trainee sees. Kept as aliases
// for one release (typed ids, links, progress files), with a note; remove them in the release after.

export const FORMER_IDS: Readonly<Record<string, string>> = {
  '01-etag-listener-leak': '01-seed-service-slows-down',
  '02-floating-s3-upload': '02-worker-heap-climbs',
  '03-bfj-slowness': '03-ten-tasks-a-second',
  '04-semi-space-gc-churn': '04-parallel-worker-slows',
  '05-log-formatting': '05-waiting-worker-busy-cpu',
  '06-duplicated-express-routes': '06-app-slows-by-the-hour',
  '07-dns-lookup-per-metric': '07-p99-hits-a-second',
  '08-broker-send-per-request': '08-slow-on-an-idle-cpu',
  '09-cpu-scaling': '09-one-core-busy',
};

/** The current id for a former id or its name without the number ("etag-listener-leak"), else undefined. */
export function currentIdOf(name: string): string | undefined {
  const wanted = name.trim().toLowerCase();
  for (const [former, current] of Object.entries(FORMER_IDS)) {
    if (wanted === former || wanted === former.slice(3)) return current;
  }
  return undefined;
}

/** The note a command prints when it was given a former id. */
export function formerIdNote(name: string, current: string): string {
  return `note: "${name}" is the former name of exercise ${current}; former names work until the next release.`;
}
