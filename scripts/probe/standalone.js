// The probe for any Node service, JavaScript so that plain `node` loads it:
//
//   node --import hot-path/probe app.js
//
// It is inject.ts, the probe every exercise server gets, loaded through tsx's scoped import: the service's
// own modules are not compiled by tsx. Under `workshop measure` the harness starts the service with an IPC
// channel and the probe reports over it, as in an exercise. Started on its own, a service has no channel:
// with HOTPATH_FIGURES_FILE set, the probe writes its figures to that file instead, one line of JSON a
// sample (every HOTPATH_SAMPLE_MS, default 1000), each covering the time since the line before. Without
// either, it does nothing. docs/measure.md says what it costs and where it stops.
import { appendFileSync } from 'node:fs';
import cluster from 'node:cluster';
import { isMainThread } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

const file = process.env.HOTPATH_FIGURES_FILE;
// Under the harness (an IPC channel and HOTPATH_PROBE=1), importing inject.ts starts it on the channel.
const { startReporting } = await tsImport('./inject.ts', import.meta.url);

// A worker thread runs this preload too, and has no channel either: only a process's main thread writes.
if (!process.send && !cluster.isWorker && isMainThread && file) {
  const write = (record) => appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), pid: process.pid, ...record })}\n`);
  startReporting(
    (message) => {
      if (message.type === 'listening') write({ type: 'listening', port: message.port, address: message.address });
      if (message.type === 'sample') write({ type: 'sample', figures: message.figures });
    },
    { resetAfterEachSample: true },
  );
}
