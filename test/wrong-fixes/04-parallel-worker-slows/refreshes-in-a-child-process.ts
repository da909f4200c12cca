// node-flags: --max-semi-space-size=16
// Wrong: the shipped refresh, unchanged, moved into a child process spawned without the probe's preloads
// (`spawn(process.execPath, ['--import', 'tsx', child])`, the shipped 16 MB semi-space): the pages pile up
// in the child's young generation as before and its scavenges cost what they did, in a process whose GC
// nobody reports. The main process only takes the requests and passes the summaries on.
// under-load: processes the probe could not see
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import restify from 'restify';

const childFile = fileURLToPath(new URL('./lib/refresh-child.ts', import.meta.url));
const child = spawn(process.execPath, ['--max-semi-space-size=16', '--import', import.meta.resolve('tsx'), childFile], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const waiting = new Map<number, (summary: unknown) => void>();
let nextId = 0;
const ready = new Promise<void>((resolve) => {
  child.on('message', (message: { ready?: boolean; id?: number; summary?: unknown }) => {
    if (message.ready) return resolve();
    waiting.get(message.id!)?.(message.summary);
    waiting.delete(message.id!);
  });
});
process.on('exit', () => child.kill());

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const id = nextId++;
  const summary = await new Promise((resolve) => {
    waiting.set(id, resolve);
    child.send({ id });
  });
  res.send(summary);
});

await ready;
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`refresh worker listening on ${server.url}`);
});
