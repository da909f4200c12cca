// The ceiling for exercise 01: bare restify answering GET /seed/v1 with the same payload and the same
// write path (res.send of an object) as the exercise, and nothing else. No fix can beat it by much, so
// the last stage is measured against it.
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });

server.get('/seed/v1', (req, res, next) => {
  res.send({ data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
