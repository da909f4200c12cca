import { describe, expect, it } from 'vitest';
import type { RunReport, ServerRun } from '../scripts/result.ts';
import { renderReportHtml, verdictStatus } from '../scripts/hub/report-html.ts';
import { overallWord } from '../scripts/report.ts';
import { secondPercentiles } from '../scripts/load.ts';
import { judge, verdictsPass } from '../scripts/verdict.ts';
import { loadResult, sampleManifest, serverRun } from './sample.ts';

function report(servers: ServerRun[], manifest = sampleManifest()): RunReport {
  const verdicts = judge(manifest, servers);
  return {
    exercise: { id: manifest.id, title: manifest.title },
    node: 'v20.0.0',
    startedAt: '2026-01-01T00:00:00.000Z',
    load: manifest.load,
    servers,
    verdicts,
    pass: verdictsPass(verdicts),
  };
}

const cells = (html: string, row: string) => {
  const match = new RegExp(`<tr data-label="${row}">(.*?)</tr>`).exec(html);
  return match ? [...match[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((m) => m[1]) : [];
};

describe('the report as HTML', () => {
  const servers = [
    serverRun('broken', 'broken', 60),
    serverRun('stage 1', 'stage', 8182),
    serverRun('stage 2', 'stage', 12500),
    serverRun('ceiling', 'ceiling', 13000),
  ];

  it('shows the answers that kept the contract, and the copies among all the answers when they were keyed', () => {
    const keyed = (repeated: number) =>
      serverRun('mine', 'mine', 9000, { answers: { sampled: 160, broken: 0, problems: [], keyed: { what: 'seed data', answers: 20_000, repeated } } });
    const copied = cells(renderReportHtml(report([servers[0]!, keyed(9_000)])), 'mine');
    expect(copied).toContain('160/160 · 9,000 copies of 20,000');
    expect(renderReportHtml(report([servers[0]!, keyed(9_000)]))).toMatch(/hp-bad">160\/160 · 9,000 copies/);
    // One in a hundred may meet by chance: shown, not marked.
    expect(renderReportHtml(report([servers[0]!, keyed(150)]))).toMatch(/hp-extra">160\/160 · 150 copies of 20,000/);
  });

  it('puts every server side by side with its figures', () => {
    const html = renderReportHtml(report(servers));
    expect(html).toContain('class="hp-figures"');
    expect(cells(html, 'broken').slice(0, 3)).toEqual(['broken', 'broken', '60']);
    expect(cells(html, 'stage 2')[2]).toBe('12,500');
    // The latency columns and the error counts, as the terminal shows them.
    expect(cells(html, 'ceiling').slice(5, 10)).toEqual(['1', '2', '3', '9', '0/0/0']);
    expect(html).toContain('<td class="hp-num">3</td><td class="hp-num hp-extra">9</td>');
    // A bar scaled to the fastest server.
    expect(html).toMatch(/<tr data-label="ceiling">.*width:100\.0%/);
  });

  it("shows the cores each server used between its turns, marked when a judged one used more than it may", () => {
    const resting = [
      serverRun('broken', 'broken', 60, { betweenTurns: { cores: 0.02, seconds: 20 } }),
      serverRun('stage 1', 'stage', 8182, { betweenTurns: { cores: 0.03, seconds: 20, atMost: 0.15 } }),
      serverRun('stage 2', 'stage', 12500, { betweenTurns: { cores: 0.67, seconds: 20, atMost: 0.15 } }),
    ];
    const html = renderReportHtml(report(resting));
    expect(html).toContain('cores between turns');
    expect(cells(html, 'stage 1')).toContain('0.03');
    const row = (label: string) => new RegExp(`<tr data-label="${label}">(.*?)</tr>`).exec(html)?.[1] ?? '';
    expect(row('stage 2')).toContain('<td class="hp-num hp-extra hp-bad">0.67</td>');
    expect(row('stage 1')).toContain('<td class="hp-num hp-extra">0.03</td>');
  });

  it('shows the cores other programs used during each server\'s turns, marked when they were not alike', () => {
    const html = renderReportHtml(
      report([
        serverRun('broken', 'broken', 60, { othersInTurns: { cores: 1.62 } }),
        serverRun('stage 1', 'stage', 8182, { othersInTurns: { cores: 0.02, other: 0.03, otherLabel: 'ceiling' } }),
        serverRun('mine', 'mine', 900, { othersInTurns: { cores: 0.03, other: 1.62, otherLabel: 'broken' } }),
      ]),
    );
    expect(html).toContain('cores other programs used in its turns');
    const row = (label: string) => new RegExp(`<tr data-label="${label}">(.*?)</tr>`).exec(html)?.[1] ?? '';
    expect(row('mine')).toContain('<td class="hp-num hp-extra hp-bad">0.03</td>');
    expect(row('stage 1')).toContain('<td class="hp-num hp-extra">0.02</td>');
    expect(row('broken')).toContain('<td class="hp-num hp-extra">1.62</td>');
  });

  it('has a card per judged server with ratio, requirement, figure in this run, margin and status', () => {
    const html = renderReportHtml(report(servers));
    expect(html).toContain('data-pass="true"');
    const card = /<section class="hp-verdict-card hp-pass" data-label="stage 1">(.*?)<\/section>/.exec(html)?.[1] ?? '';
    expect(card).toContain('<span class="hp-badge hp-pass">pass</span>');
    const row = [...card.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((m) => m[1]).slice(6);
    // 8182 / 60 = 136.4x; needs 10x = 600 req/s in this run; margin +1264%.
    expect(row).toEqual(['req/s vs broken', '136.4x (8,182 req/s)', '≥ 10.0x', '≥ 600 req/s (broken 60 req/s)', '+1264%', 'ok']);
    expect(html).toMatch(/<p class="hp-overall hp-pass">PASS/);
  });

  it('shows a failure: the short target, the problem, the server\'s output', () => {
    const failing = [
      serverRun('broken', 'broken', 60),
      serverRun('stage 1', 'stage', 300, { load: loadResult(300, { errors: 4 }), failure: undefined }),
      serverRun('stage 2', 'stage', undefined, { failure: 'the server crashed during the load (SIGSEGV)', output: 'boom\nline 2' }),
      serverRun('ceiling', 'ceiling', 12860),
    ];
    const result = report(failing);
    const html = renderReportHtml(result);
    expect(result.pass).toBe(false);
    expect(html).toContain('data-pass="false"');
    expect(html).toMatch(/data-label="stage 1">.*<span class="hp-badge hp-fail">fail<\/span>/);
    expect(html).toContain('<li class="hp-problem">✗ 4 request errors under load</li>');
    expect(html).toMatch(/<tr class="hp-fail"><th scope="row">req\/s vs broken<\/th><td class="hp-num">5\.00x \(300 req\/s\)<\/td>.*<td>short<\/td>/);
    expect(cells(html, 'stage 2')).toContain('failed');
    expect(html).toContain('<pre>boom\nline 2</pre>');
    expect(html).toMatch(/<p class="hp-overall hp-fail">FAIL/);
  });

  it('escapes everything that comes from a server or a manifest', () => {
    const evil = '<img src=x onerror="alert(1)">&';
    const servers = [
      serverRun('broken', 'broken', 60, { title: evil }),
      serverRun('stage 1', 'stage', 100, { failure: `crashed: ${evil}`, output: `</pre><script>alert(2)</script>` }),
      serverRun('stage 2', 'stage', 200),
      serverRun('ceiling', 'ceiling', 300),
    ];
    const result = report(servers);
    result.exercise.id = '<b>01</b>';
    result.load = { ...result.load, path: '/"><script>' };
    const html = renderReportHtml(result);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<b>01');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
  });

  it('words the broken server\'s symptom and a stage wrong on purpose as the terminal does', () => {
    expect(verdictStatus({ label: 'broken', pass: true, targets: [], problems: [], symptom: true })).toEqual({ text: 'shows the bug', kind: 'note' });
    const wrong = { label: 'stage 2', pass: false, targets: [], problems: [], expectedToFail: { why: 'it loses events', problem: 'lost', rejected: true } };
    expect(verdictStatus(wrong)).toEqual({ text: 'rejected, as expected', kind: 'note' });
    expect(verdictStatus({ ...wrong, expectedToFail: { ...wrong.expectedToFail, rejected: false } }).kind).toBe('fail');
  });

  it('renders a run that was only measured (no targets) without a verdict', () => {
    const result = report([serverRun('broken', 'broken', 60)]);
    const html = renderReportHtml({ ...result, verdicts: [], pass: true });
    expect(html).not.toContain('hp-verdict-card');
    expect(html).toMatch(/<p class="hp-overall hp-pass">measured/);
  });

  it('says how the run ended in the words the live status uses too', () => {
    const judged = report(servers);
    expect(overallWord({ ...judged, pass: true })).toBe('PASS');
    expect(overallWord({ ...judged, pass: false })).toBe('FAIL');
    expect(overallWord({ ...judged, pass: false, tooClose: true })).toBe('TOO CLOSE TO CALL');
    const cannot = { ...judged, pass: false, tooClose: true, verdicts: [{ ...judged.verdicts[0]!, cannotJudge: 'one core' }] };
    expect(overallWord(cannot)).toBe('CANNOT BE JUDGED HERE');
    expect(overallWord({ ...judged, verdicts: [], pass: true })).toBe('measured');
    expect(renderReportHtml({ ...judged, pass: false, tooClose: true })).toMatch(/<p class="hp-overall hp-note">TOO CLOSE TO CALL/);
  });
});

describe('the latency the live chart draws, second by second', () => {
  it('p50 and p99 by nearest rank of the second\'s response times; nothing for an empty second', () => {
    expect(secondPercentiles([])).toBeUndefined();
    expect(secondPercentiles([4.2])).toEqual({ p50: 4.2, p99: 4.2 });
    const times = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 .. 1, unsorted
    expect(secondPercentiles(times)).toEqual({ p50: 100, p99: 198 });
    expect(times[0]).toBe(200); // the caller's array is left as it was
  });
});
