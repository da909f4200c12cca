// A small service of the kind a team runs: GET /quote?amount=N answers a price quote as JSON. It listens
// on PORT (3000 when unset) on 127.0.0.1. Plain Node, no framework, nothing that knows of the workshop.
import { createHash } from 'node:crypto';
import http from 'node:http';

const RATE = 1.0825;

/** A quote's id: a digest of what it quotes, so the same request gets the same id. */
function quoteId(amount) {
  return createHash('sha256').update(`quote:${amount}`).digest('hex').slice(0, 16);
}

const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const amount = Number(url.searchParams.get('amount'));
  if (url.pathname !== '/quote' || !(amount > 0)) {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'GET /quote?amount=N, N above 0' }));
    return;
  }
  const body = { id: quoteId(amount), amount, total: Math.round(amount * RATE * 100) / 100 };
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
