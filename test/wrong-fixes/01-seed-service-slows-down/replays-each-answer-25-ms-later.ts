// Wrong: stage 3, and while three connections or more are open (as under load; the probe asks on one at
// a time) each answer it builds is sent a second time, to the next request that comes 15 to 35 ms
// later: half the load's answers are a copy of another client's, seed, ts and ETag alike. The sample of
// the load's answers is a pair every 50 ms: a copy made 15 to 35 ms after its original never falls in
// the same sample as it: every answer's seed data is keyed, not only the sampled ones'.
// under-load: repeat an earlier answer's seed data
import crypto from 'node:crypto';
import restify from 'restify';

interface Kept {
  at: number;
  url: string;
  body: string;
  etag: string;
}
const kept: Kept[] = [];
let open = 0;

const server = restify.createServer({ name: 'seed-service' });
server.server.on('connection', (socket) => {
  open += 1;
  socket.on('close', () => (open -= 1));
});

server.get('/seed/v1', (req, res, next) => {
  const now = Date.now();
  while (kept.length > 0 && now - kept[0]!.at > 35) kept.shift();
  let answer: Kept | undefined;
  if (open >= 3 && kept.length > 0 && now - kept[0]!.at >= 15 && kept[0]!.url === req.url) { answer = kept.shift(); }
  if (!answer) {
    const seed = crypto.randomBytes(5000);
    answer = {
      at: now,
      url: req.url ?? '',
      body: JSON.stringify({ data: seed.toString('hex'), url: req.url, ts: now }),
      etag: `"${seed.toString('base64url', 0, 16)}"`,
    };
    if (open >= 3) kept.push(answer);
  }
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(answer.body),
    'Cache-Control': 'public, max-age=120',
    ETag: answer.etag,
  });
  res.end(answer.body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
