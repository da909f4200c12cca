import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { AnswerSampler, answerProblems, checkAnswers, SAMPLE_EVERY_MS } from '../scripts/answers.ts';
import { AnswerTimeline } from '../scripts/answer-timeline.ts';
import { runPhase } from '../scripts/load.ts';
import type { AnswerContract, AnswerSample } from '../scripts/manifest.ts';
import { defineService, ServiceContexts } from '../scripts/service.ts';

const json = (body: object, headers: Record<string, string> = { 'content-type': 'application/json' }): AnswerSample => ({
  status: 200,
  headers,
  body: JSON.stringify(body),
  receivedAt: Date.now(),
});

const contract: AnswerContract = {
  check: (answer) => {
    const problems: string[] = [];
    if (!(answer.headers['content-type'] ?? '').startsWith('application/json')) problems.push('Content-Type is not application/json');
    if (JSON.parse(answer.body).data?.length !== 4) problems.push('data is not 4 characters');
    return problems;
  },
  distinct: (answer) => JSON.parse(answer.body).data,
  distinctWhat: 'the data',
};

describe('answers under load', () => {
  it('keys every answer, not only the sampled ones: copies sent between the samples fail, a chance repeat in a hundred does not', () => {
    const keyedBy = { key: (body: string) => /"id":"([^"]*)"/.exec(body)?.[1], what: 'id' };
    const sampler = new AnswerSampler(keyedBy);
    // 200 answers in one instant: one pair sampled; every other answer a copy of the one before it.
    for (let i = 0; i < 200; i++) sampler.onResponse(200, `{"id":"${Math.floor(i / 2)}"}`, {}, {});
    sampler.onResponse(500, '{"id":"0"}', {}, {}); // an error is not an answer to key
    sampler.onResponse(200, 'no id', {}, {});
    expect(sampler.samples.length).toBe(2);
    const copied = checkAnswers(contract, sampler.samples, undefined, sampler.keyed());
    expect(copied.keyed).toEqual({ what: 'id', answers: 200, repeated: 100, example: '0' });
    expect(answerProblems(copied).join('\n')).toContain("100 of 200 answers (every one, not only the sampled) repeat an earlier answer's id");

    const honest = new AnswerSampler(keyedBy);
    for (let i = 0; i < 200; i++) honest.onResponse(200, `{"id":"${i === 199 ? 0 : i}"}`, {}, {});
    const once = checkAnswers(contract, honest.samples, undefined, honest.keyed());
    expect(once.keyed?.repeated).toBe(1);
    expect(answerProblems(once).some((p) => p.includes('repeat an earlier answer'))).toBe(false);
    // A contract without the key: nothing kept, nothing said.
    expect(new AnswerSampler().keyed()).toBeUndefined();
  });

  it('keeps two answers every interval, the first to arrive and the next, whatever the rate', async () => {
    const sampler = new AnswerSampler();
    const until = Date.now() + 5 * SAMPLE_EVERY_MS;
    let offered = 0;
    while (Date.now() < until) {
      sampler.onResponse(200, String(offered), {}, { 'Content-Type': 'text/plain' });
      offered += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(offered).toBeGreaterThan(50);
    const { samples } = sampler;
    expect(samples.length).toBeGreaterThanOrEqual(8);
    expect(samples.length).toBeLessThanOrEqual(12);
    expect(samples[0]!.headers['content-type']).toBe('text/plain');
    // Each pair: a steady sample, then the very next answer, which says it follows.
    for (let i = 0; i + 1 < samples.length; i += 2) {
      expect(samples[i]!.follows).toBeUndefined();
      expect(samples[i + 1]!.follows).toBe(true);
      expect(Number(samples[i + 1]!.body)).toBe(Number(samples[i]!.body) + 1);
    }
  });

  it('finds random data kept in part from an earlier answer, and passes random data', () => {
    const hex = (length: number) => Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join('');
    const seeded: AnswerContract = { check: () => [], random: { value: (answer) => JSON.parse(answer.body).data, what: 'the seed data' } };
    const base = hex(10_000);
    // A fresh head of 32 characters on the same 9,968: every answer after the first agrees with it almost everywhere.
    const kept = checkAnswers(seeded, Array.from({ length: 10 }, () => json({ data: hex(32) + base.slice(32) })));
    expect(kept.broken).toBe(9);
    expect(kept.problems[0]!.problem).toBe('the seed data agrees with an earlier answer\'s in over a quarter of its positions');
    // Fresh throughout: random hex agrees in a sixteenth of its positions.
    expect(checkAnswers(seeded, Array.from({ length: 60 }, () => json({ data: hex(10_000) }))).broken).toBe(0);
    // Half fresh is still kept: half the positions agree.
    expect(checkAnswers(seeded, [json({ data: base }), json({ data: hex(5_000) + base.slice(5_000) })]).broken).toBe(1);
    // Windows of one pool drawn once, at other offsets: they agree by position no more than random data,
    // and share a run of it with an earlier answer, however far back.
    const pool = hex(40_000);
    const windows = [0, 9_000, 1_234, 17_001, 25_000, 30_000, 4_321].map((at) => json({ data: pool.slice(at, at + 10_000) }));
    const shifted = checkAnswers(seeded, [...windows.slice(0, 1), ...Array.from({ length: 45 }, () => json({ data: hex(10_000) })), ...windows.slice(1)]);
    expect(shifted.problems.map((p) => p.problem)).toEqual(["the seed data holds a run of 31 characters or more of an earlier answer's, shifted"]);
    // The first window overlaps none before it; each of the six after it overlaps one before it.
    expect(shifted.broken).toBe(6);
  });

  it('counts each way the contract is broken, and repeated data where it must be fresh', () => {
    const samples = [json({ data: 'abcd' }), json({ data: 'efgh' }), json({ data: 'abcd' }), json({ data: 'ab' }), json({ data: 'wxyz' }, {})];
    const check = checkAnswers(contract, samples);
    expect(check.sampled).toBe(5);
    expect(check.broken).toBe(3);
    expect(check.problems.map((p) => [p.problem, p.count])).toEqual(
      expect.arrayContaining([
        ["the data repeats an earlier answer's", 1],
        ['data is not 4 characters', 1],
        ['Content-Type is not application/json', 1],
      ]),
    );
    const problems = answerProblems(check);
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/^under load: 1 of 5 sampled answers: the data repeats an earlier answer's \(e\.g\. 200 application\/json/m);
  });

  it('passes answers that keep the contract, and fails a run where nothing could be sampled', () => {
    expect(answerProblems(checkAnswers(contract, [json({ data: 'abcd' }), json({ data: 'efgh' })]))).toEqual([]);
    expect(answerProblems(checkAnswers(contract, []))).toEqual(['under load: no answer could be sampled']);
  });

  it("dates a kept answer's request from the response time that follows it, and only that answer's", () => {
    const sampler = new AnswerSampler();
    sampler.onTimed(undefined, 200, 10, 5); // an answer that was not kept
    sampler.onResponse(200, 'x', {}, {});
    const kept = sampler.samples[0]!;
    expect(kept.sentAt).toBeUndefined();
    sampler.onTimed(undefined, 200, 10, 12.5);
    expect(kept.sentAt).toBe(kept.receivedAt - 12.5);
    sampler.onTimed(undefined, 200, 10, 400); // the next answer's, not kept
    expect(kept.sentAt).toBe(kept.receivedAt - 12.5);
  });

  it("gives the contract the server's own services", () => {
    const clock = defineService({ name: 'clock', start: async () => ({ prepare: async () => ({ env: {}, context: 0 }), describe: () => '', stop: async () => {} }) });
    const services = new ServiceContexts();
    services.set(clock, 1000);
    const late: AnswerContract = { check: (answer, context) => ((answer.sentAt ?? 0) > (context.services.get(clock) ?? Infinity) ? ['sent after the clock'] : []) };
    const at = (sentAt: number): AnswerSample => ({ ...json({ data: 'abcd' }), sentAt });
    expect(checkAnswers(late, [at(900), at(1100), at(1200)], services).broken).toBe(2);
    // Without the services, the contract has nothing to compare.
    expect(checkAnswers(late, [at(900), at(1100)]).broken).toBe(0);
  });

  it('reports a contract that throws as a broken answer, not a crash of the harness', () => {
    const check = checkAnswers(contract, [{ status: 200, headers: { 'content-type': 'application/json' }, body: 'not json', receivedAt: 0 }]);
    expect(check.broken).toBe(1);
    expect(check.problems[0]!.problem).toMatch(/^the contract could not read it/);
  });

  it('holds a value that must change to changing in most answers, not in every one', () => {
    const validated: AnswerContract = { check: () => [], changes: { value: (answer) => answer.headers.etag, what: 'the ETag' } };
    const tagged = (etags: Array<string | undefined>) =>
      etags.map((etag, i) => ({ ...json({ data: String(i).padStart(4, '0') }), headers: { 'content-type': 'application/json', ...(etag ? { etag } : {}) } }));
    // One ETag for every answer: each after the first repeats it.
    const same = checkAnswers(validated, tagged(Array.from({ length: 12 }, () => '"x"')));
    expect(same.broken).toBe(11);
    expect(same.problems[0]!.problem).toBe('the ETag stays the same from answer to answer');
    // Two values taking turns: 2 of 12 differ.
    expect(checkAnswers(validated, tagged(Array.from({ length: 12 }, (_, i) => `"${i % 2}"`))).broken).toBe(10);
    // Answers served together may share one: half of them differing is a value that changes.
    expect(checkAnswers(validated, tagged(Array.from({ length: 12 }, (_, i) => `"${Math.floor(i / 2)}"`))).broken).toBe(0);
    expect(checkAnswers(validated, tagged(Array.from({ length: 12 }, (_, i) => `"${i}"`))).broken).toBe(0);
    // Too few to say, and answers without the value (another rule's business) are not counted.
    expect(checkAnswers(validated, tagged(Array.from({ length: 9 }, () => '"x"'))).broken).toBe(0);
    expect(checkAnswers(validated, tagged([...Array.from({ length: 9 }, () => '"x"'), ...Array.from({ length: 20 }, () => undefined)])).broken).toBe(0);
    // The second answer of each sampled pair, served at the same moment as the first, is not counted: 11
    // values over 20 steady samples change, though over all 40 answers they would not.
    const paired = tagged(Array.from({ length: 40 }, (_, i) => `"${Math.floor(i / 2) % 11}"`)).map((s, i) => ({ ...s, ...(i % 2 ? { follows: true } : {}) }));
    expect(checkAnswers(validated, paired).broken).toBe(0);
    expect(checkAnswers(validated, paired.map(({ follows: _, ...s }) => s)).broken).toBeGreaterThan(0);
  });

  it('fails a value that must change when most sampled pairs share it though their data differ', () => {
    const validated: AnswerContract = { check: () => [], distinct: (answer) => JSON.parse(answer.body).data, changes: { value: (answer) => answer.headers.etag, what: 'the ETag' } };
    // 20 pairs: a steady sample with an ETag of its own, then the answer after it, with `shares` of them keeping the first's.
    const pairs = (shares: (pair: number) => boolean, data = (i: number) => String(i).padStart(4, '0')) =>
      Array.from({ length: 40 }, (_, i) => {
        const pair = Math.floor(i / 2);
        const etag = i % 2 === 1 && shares(pair) ? `"${pair}"` : `"${i}"`;
        return { ...json({ data: data(i) }), headers: { 'content-type': 'application/json', etag: i % 2 === 0 ? `"${pair}"` : etag }, ...(i % 2 ? { follows: true } : {}) };
      });
    // Every steady sample's ETag differs: the steady rule alone passes them all.
    const kept = checkAnswers(validated, pairs(() => true));
    expect(kept.broken).toBe(20);
    expect(kept.problems[0]!.problem).toBe('the ETag is the one the answer just before it had, though the data differ');
    // Answers in flight together may share one now and then: a third of the pairs or fewer is allowed.
    expect(checkAnswers(validated, pairs((pair) => pair % 4 === 0)).broken).toBe(0);
    expect(checkAnswers(validated, pairs((pair) => pair % 2 === 0)).broken).toBe(10);
    // A pair whose data are the same (another rule's business: they repeat) is not counted, nor are fewer than 10 pairs.
    expect(checkAnswers({ ...validated, distinct: undefined }, pairs(() => true)).broken).toBe(0);
    expect(checkAnswers(validated, pairs(() => true, (i) => String(Math.floor(i / 2)).padStart(4, '0'))).problems.map((p) => p.problem)).not.toContain(
      'the ETag is the one the answer just before it had, though the data differ',
    );
    expect(checkAnswers(validated, pairs(() => true).slice(0, 18)).broken).toBe(0);
  });
});


describe('answers by the time they arrived', () => {
  it('counts 2xx answers in 100 ms steps, each dated at its end, running totals in time order', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const timeline = new AnswerTimeline();
      expect(timeline.answeredBy()).toEqual([]);
      vi.setSystemTime(1_000_050);
      timeline.onResponse(undefined, 200);
      timeline.onResponse(undefined, 204);
      timeline.onResponse(undefined, 500); // not an answer a client can use
      vi.setSystemTime(1_000_370);
      timeline.onResponse(undefined, 200);
      vi.setSystemTime(1_000_099); // a step already counted, reached late
      timeline.onResponse(undefined, 200);
      expect(timeline.answeredBy()).toEqual([
        { at: 1_000_100, answered: 3 },
        { at: 1_000_400, answered: 4 },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a load whose path has an id', () => {
  it('asks with a new id in each request; each sample and each 2xx answer keeps its own', async () => {
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      asked.push(req.url!);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const sampler = new AnswerSampler();
      const timeline = new AnswerTimeline();
      const profile = { path: '/users/u-[<id>]', connections: 2, warmupSeconds: 0, durationSeconds: 1, rate: 200 };
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await runPhase(url, profile, 'measured', 1, () => {}, { sampler, timeline });
      expect(asked.length).toBeGreaterThan(50);
      expect(asked.every((path) => /^\/users\/u-[0-9a-f]{6}[0-9a-z]+$/.test(path))).toBe(true);
      expect(new Set(asked).size).toBe(asked.length);
      // Each sample's id is the one its request asked with, and so is each answer's.
      // autocannon sends a rate's requests of a second in bursts: one or two sampling moments in the second.
      expect(sampler.samples.length).toBeGreaterThanOrEqual(2);
      for (const sample of sampler.samples) expect(JSON.parse(sample.body).url).toBe(`/users/u-${sample.id}`);
      const answers = timeline.answeredIds();
      expect(answers.length).toBeGreaterThanOrEqual(asked.length - profile.connections);
      expect(answers.every(({ id }) => asked.includes(`/users/u-${id}`))).toBe(true);
      expect(new Set(answers.map(({ id }) => id)).size).toBe(answers.length);
    } finally {
      server.close();
    }
  });
});
