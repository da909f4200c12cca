// Wrong: publishes each decision without waiting for the broker's acknowledgement, and without handling
// a failure. Fast, and the idle probe sees every event arrive; but the publishes pile up in the client
// faster than the broker acknowledges them: events reach the broker seconds late, and SIGTERM ends the
// process with the rest still unsent (verify's load loses most of them). Lateness is named: under this
// test's short load on a busy machine the pile can drain before the stop, so nothing is lost, but what
// waited in it arrived late.
// after-load: it reached the broker within 2.5 s of its decision | events lost of the
// (Late under enough load, its sends piled up in the client; with little load, as on a busy machine, the
// pile drains, and what it loses is the sends still pending when SIGTERM ends it.)
import mqtt from 'mqtt';
import restify from 'restify';
import { assign, EXPERIMENTS, type DecisionEvent } from '../../../exercises/08-slow-on-an-idle-cpu/assignment.ts';

// The broker and the topic come from the environment, as in production (see README.md).
const topic = process.env.BROKER_TOPIC ?? 'events/decisions';
const producer = await mqtt.connectAsync(process.env.BROKER_URL ?? 'mqtt://127.0.0.1:1883', { clientId: `decisions-${process.pid}` });
producer.on('error', (error) => console.error('broker connection:', error.message));

/** Publishes one decision; the answer need not wait for the broker. */
function record(event: DecisionEvent): void {
  void producer.publishAsync(topic, JSON.stringify(event), { qos: 1 });
}

const server = restify.createServer({ name: 'decisions' });

server.get('/experiments/:experiment/users/:user', async (req: restify.Request, res: restify.Response) => {
  const { experiment, user } = req.params as { experiment: string; user: string };
  if (!EXPERIMENTS.includes(experiment)) {
    res.send(404, { error: `no experiment ${experiment}; there are ${EXPERIMENTS.join(', ')}` });
    return;
  }
  const decision = assign(user, experiment);
  record({ ...decision, decidedAt: Date.now() });
  res.send(decision);
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
