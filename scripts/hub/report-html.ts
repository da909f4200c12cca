// A RunReport as HTML for the hub: the servers' figures side by side, then a card per judged server with
// its targets (measured ratio, required, in this run's units, margin, pass), as the terminal report shows
// them. Every string from the report is escaped: labels, titles and failures can carry a server's output.
import { keyedProblem } from '../answers.ts';
import { integer, percent, ratio, signedPercent } from '../format.ts';
import type { RunReport, ServerRun, ServerVerdict, TargetResult } from '../result.ts';
import { connectionsFor, intervalText, measuredFor, overallWord } from '../report.ts';
import { escapeHtml as e } from '../html.ts';
import { othersInTurnsProblem } from '../others-during-turns.ts';

export function renderReportHtml(report: RunReport): string {
  const { load } = report;
  const measured = measuredFor(report);
  const parts = [
    `<div class="hp-report" data-pass="${report.pass}">`,
    `<p class="hp-report-meta">Exercise ${e(report.exercise.id)} · Node ${e(report.node)} · ${e(load.method ?? 'GET')} ${e(load.path)} · ` +
      `${e(connectionsFor(report))} connections · ${e(measured)}</p>`,
    figuresTable(report.servers),
  ];
  if (report.verdicts.length > 0) {
    parts.push(`<div class="hp-verdicts">${report.verdicts.map((v) => verdictCard(v, report.servers)).join('')}</div>`);
  }
  const failed = report.servers.filter((s) => s.failure || s.check?.ok === false || s.checkAfterLoad?.ok === false || s.afterLoad?.ok === false);
  for (const server of failed) parts.push(serverProblems(server));
  parts.push(
    `<p class="hp-overall ${report.pass ? 'hp-pass' : report.tooClose ? 'hp-note' : 'hp-fail'}">${overallWord(report)}` +
      `${report.runs ? ` <span class="hp-dim">(passed in ${report.runs.passedRuns} of ${report.runs.count} runs on its own)</span>` : ''}</p>`,
    '</div>',
  );
  return parts.join('\n');
}

function figuresTable(servers: ServerRun[]): string {
  const top = Math.max(0, ...servers.map((s) => s.load?.requestsPerSecond.mean ?? 0));
  const rows = servers.map((s) => {
    const l = s.load;
    const status = s.failure ? 'failed' : s.check?.ok === false ? 'wrong answers' : l ? '' : 'not loaded';
    const head = `<th scope="row">${e(s.label)}</th><td class="hp-what">${e(s.title)}</td>`;
    if (!l) return `<tr data-label="${e(s.label)}">${head}<td colspan="11"></td><td class="hp-bad">${e(status)}</td></tr>`;
    const rest = s.betweenTurns;
    const restless = rest?.atMost !== undefined && rest.cores > rest.atMost;
    const problems = l.errors + l.timeouts + l.non2xx;
    const width = top > 0 ? Math.max(0.5, (l.requestsPerSecond.mean / top) * 100).toFixed(1) : '0';
    return (
      `<tr data-label="${e(s.label)}">${head}` +
      `<td class="hp-num hp-rps">${integer(l.requestsPerSecond.mean)}</td>` +
      `<td class="hp-barcell"><span class="hp-bar" style="width:${width}%"></span></td>` +
      `<td class="hp-num hp-extra">${integer(l.requestsPerSecond.stdev)}</td>` +
      `<td class="hp-num hp-extra">${integer(l.latency.p50)}</td><td class="hp-num hp-extra">${integer(l.latency.p90)}</td>` +
      `<td class="hp-num">${integer(l.latency.p99)}</td><td class="hp-num hp-extra">${integer(l.latency.max)}</td>` +
      `<td class="hp-num${problems > 0 ? ' hp-bad' : ''}">${l.errors}/${l.timeouts}/${l.non2xx}</td>` +
      `<td class="hp-num hp-extra${s.answers && (s.answers.broken > 0 || keyedProblem(s.answers.keyed)) ? ' hp-bad' : ''}">${s.answers ? answersCell(s.answers) : ''}</td>` +
      `<td class="hp-num hp-extra${restless ? ' hp-bad' : ''}">${rest ? rest.cores.toFixed(2) : ''}</td>` +
      `<td class="hp-num hp-extra${othersInTurnsProblem(s) ? ' hp-bad' : ''}">${s.othersInTurns ? s.othersInTurns.cores.toFixed(2) : ''}</td>` +
      `<td class="hp-bad">${e(status)}</td></tr>`
    );
  });
  // hp-extra: columns a slide leaves out to keep the rest readable from the back of the room.
  const header = ['server', 'what', 'req/s', '', '±sd', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'err/timeout/non2xx', 'answers kept the contract', 'cores between turns', 'cores other programs used in its turns', ''];
  const extra = new Set(['±sd', 'p50 ms', 'p90 ms', 'max ms', 'answers kept the contract', 'cores between turns', 'cores other programs used in its turns']);
  return (
    `<table class="hp-figures"><thead><tr>${header.map((h) => `<th scope="col"${extra.has(h) ? ' class="hp-extra"' : ''}>${e(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** The verdict's status word and its class, as the terminal report words them. */
export function verdictStatus(verdict: ServerVerdict): { text: string; kind: 'pass' | 'fail' | 'note' } {
  if (verdict.symptom) return verdict.pass ? { text: 'shows the bug', kind: 'note' } : { text: 'does not show the bug as the exercise expects', kind: 'fail' };
  if (verdict.expectedToFail) return verdict.expectedToFail.rejected ? { text: 'rejected, as expected', kind: 'note' } : { text: 'not rejected: it was expected to fail', kind: 'fail' };
  if (verdict.pass) return { text: 'pass', kind: 'pass' };
  if (verdict.cannotJudge) return { text: 'cannot be judged here', kind: 'note' };
  if (verdict.tooClose) return { text: 'too close to call', kind: 'note' };
  return { text: 'fail', kind: 'fail' };
}

function verdictCard(verdict: ServerVerdict, servers: ServerRun[]): string {
  const server = servers.find((s) => s.label === verdict.label);
  const status = verdictStatus(verdict);
  const rows = verdict.targets.map((t) => targetRow(t, server));
  const notes = [
    ...verdict.problems.map((p) => `<li class="hp-problem">✗ ${e(p)}</li>`),
    ...verdict.targets
      .filter((t) => t.noisy)
      .map((t) => `<li class="hp-warning">⚠ ${e(t.name)}: its margin is within the run-to-run spread: too noisy to call</li>`),
    ...(verdict.cannotJudge ? [`<li class="hp-warning">why: ${e(verdict.cannotJudge)}</li>`] : []),
    ...(verdict.notExpectedHere ? [`<li class="hp-warning">note: ${e(verdict.notExpectedHere)}</li>`] : []),
    ...(verdict.expectedToFail ? [`<li class="hp-warning">why it is shown: ${e(verdict.expectedToFail.why)}</li>`] : []),
  ];
  return [
    `<section class="hp-verdict-card hp-${status.kind}" data-label="${e(verdict.label)}"${verdict.symptom ? ' data-symptom="true"' : ''}>`,
    `<h4>${e(verdict.label)}${server ? ` <span class="hp-dim">· ${e(server.title)}</span>` : ''} <span class="hp-badge hp-${status.kind}">${e(status.text)}</span></h4>`,
    rows.length > 0
      ? `<table class="hp-targets"><thead><tr><th scope="col">target</th><th scope="col">measured</th><th scope="col">needs</th>` +
        `<th scope="col">in this run</th><th scope="col">margin</th><th scope="col"></th></tr></thead><tbody>${rows.join('')}</tbody></table>`
      : '',
    notes.length > 0 ? `<ul class="hp-notes">${notes.join('')}</ul>` : '',
    '</section>',
  ].join('');
}

function targetRow(result: TargetResult, server?: ServerRun): string {
  const { target } = result;
  const bound = target.atLeast !== undefined ? `≥ ${ratio(target.atLeast)}` : `≤ ${ratio(target.atMost!)}`;
  // The figures in the metric's unit, as the run that judged them wrote them; plain numbers without.
  const shown = result.shown ?? {};
  const measured =
    result.ratio === undefined ? '-' : target.against === 'itself' || result.value === undefined ? ratio(result.ratio) : `${ratio(result.ratio)} (${shown.value ?? integer(result.value)})`;
  const inThisRun =
    target.against === 'itself'
      ? server
        ? (result.detail ?? '')
        : ''
      : result.requiredValue !== undefined
        ? `${target.atLeast !== undefined ? '≥' : '≤'} ${shown.requiredValue ?? integer(result.requiredValue)} (${result.referenceLabel} ${shown.referenceValue ?? integer(result.referenceValue!)})`
        : '';
  const status = result.pass ? 'ok' : result.tooClose ? 'too close to call' : (result.note ?? 'short');
  const spread = result.spread ? ` (spread ±${percent(result.spread.cv, 0)})` : result.rounds ? ` (${intervalText(result)})` : '';
  return (
    `<tr class="${result.pass ? 'hp-pass' : 'hp-fail'}"><th scope="row">${e(result.name || target.metric)}</th>` +
    `<td class="hp-num">${e(measured)}</td><td class="hp-num">${e(bound)}</td><td>${e(inThisRun)}</td>` +
    `<td class="hp-num">${result.margin !== undefined ? e(signedPercent(result.margin)) : ''}</td>` +
    `<td>${e(status + spread)}</td></tr>`
  );
}

function serverProblems(server: ServerRun): string {
  const items = [
    ...(server.failure ? [server.failure] : []),
    ...(server.check?.failures ?? []).map((f) => `✗ ${f}`),
    ...(server.checkAfterLoad?.failures ?? []).map((f) => `✗ the probe after the load: ${f}`),
    ...(server.afterLoad?.failures ?? []).map((f) => `✗ after the load: ${f}`),
  ];
  const output = server.output?.trim() ? `<details><summary>what the server printed (last lines)</summary><pre>${e(server.output.trimEnd().split('\n').slice(-20).join('\n'))}</pre></details>` : '';
  return `<div class="hp-server-problems" data-label="${e(server.label)}"><h4>${e(server.label)} <span class="hp-dim">(${e(server.file)})</span></h4><ul>${items.map((i) => `<li>${e(i)}</li>`).join('')}</ul>${output}</div>`;
}

/** Sampled answers that kept the contract, and the copies among all the load's answers when they were keyed. */
function answersCell(answers: NonNullable<ServerRun['answers']>): string {
  const kept = `${integer(answers.sampled - answers.broken)}/${integer(answers.sampled)}`;
  return answers.keyed && answers.keyed.repeated > 0 ? `${kept} · ${integer(answers.keyed.repeated)} copies of ${integer(answers.keyed.answers)}` : kept;
}
