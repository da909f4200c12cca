// Exercise 08: the decisions that wait on an idle CPU.
// An A/B-test decision service: GET /experiments/<experiment>/users/<user> answers which variant (A or
// B) the user sees. Analytics needs every decision, so each one is published as an event to the
// broker, and the answer waits for the broker's acknowledgement: no decision goes unrecorded. Alone it
// answers in a few milliseconds; under load its p99 climbs to hundreds. Find out why (README.md), fix
// this file.
import mqtt from 'mqtt';
import restify from 'restify';
import { assign, EXPERIMENTS, type DecisionEvent } from '../../exercises/08-slow-on-an-idle-cpu/assignment.ts';

// The broker and the topic come from the environment, as in production (see README.md).
const topic = process.env.BROKER_TOPIC ?? 'events/decisions';
const producer = await mqtt.connectAsync(process.env.BROKER_URL ?? 'mqtt://127.0.0.1:1883', { clientId: `decisions-${process.pid}` });
producer.on('error', (error) => console.error('broker connection:', error.message));

/** Publishes one decision and resolves once the broker has acknowledged it (QoS 1: at least once). */
async function record(event: DecisionEvent): Promise<void> {
  await producer.publishAsync(topic, JSON.stringify(event), { qos: 1 });
}

const server = restify.createServer({ name: 'decisions' });

server.get('/experiments/:experiment/users/:user', async (req: restify.Request, res: restify.Response) => {
  const { experiment, user } = req.params as { experiment: string; user: string };
  if (!EXPERIMENTS.includes(experiment)) {
    res.send(404, { error: `no experiment ${experiment}; there are ${EXPERIMENTS.join(', ')}` });
    return;
  }
  const decision = assign(user, experiment);
  await record({ ...decision, decidedAt: Date.now() });
  res.send(decision);
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
