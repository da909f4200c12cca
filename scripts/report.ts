// Renders the result model: a terminal table with a bar per server, or JSON.
import { othersInTurnsProblem } from './others-during-turns.ts';
import { bar, bold, sparkline, dim, green, integer, megabytes, padEnd, percent, ratio, red, signedPercent, table, yellow } from './format.ts';
import type { Target } from './manifest.ts';
import { heapGrowth } from './metrics/heap-growth.ts';
import { MEASURED_SERVICE_ID, type RunReport, type ServerRun, type ServerVerdict, type TargetResult } from './result.ts';
import { figureOf, NOISE_SPREADS } from './verdict.ts';

export function renderJson(report: RunReport): string {
  return JSON.stringify(report, null, 2);
}

/** The Node flags each server ran with (its file's `// node-flags:` comment, a stage's, --node-flag), when any did. */
function nodeFlagsLine(servers: ServerRun[]): string[] {
  const flagged = servers.filter((s) => s.nodeFlags.length > 0);
  return flagged.length > 0 ? [dim(`Node flags: ${flagged.map((s) => `${s.label} ${s.nodeFlags.join(' ')}`).join(' · ')}`)] : [];
}

/**
 * For a run that is not judged (run --load): the figures the exercise's goal is set on, each server's
 * value and what the figure means, so a trainee reads the one the verdict will judge.
 */
export function goalFigures(goal: Target[], servers: ServerRun[]): string {
  const lines = [bold("the figures this exercise's goal is set on")];
  for (const target of goal) {
    const bound = target.atLeast !== undefined ? `at least ${ratio(target.atLeast)}` : `at most ${ratio(target.atMost ?? 0)}`;
    const against = target.against === 'itself' ? 'of itself' : `the ${target.against} server's`;
    const values = servers.map((s) => `${s.label} ${figureOf(target.metric, s) ?? 'not measured in this run'}`);
    lines.push(`${target.metric.name}: ${values.join(' · ')} ${dim(`(goal: ${bound} ${against})`)}`, dim(`  ${target.metric.means}`));
  }
  return lines.join('\n');
}

export function renderReport(report: RunReport): string {
  const { load } = report;
  const lines = [
    bold(report.exercise.id === MEASURED_SERVICE_ID ? `Service · ${report.exercise.title}` : `Exercise ${report.exercise.id} · ${report.exercise.title}`),
    dim(
      `Node ${report.node} · ${load.method ?? 'GET'} ${load.path} · ${connectionsFor(report)} connections · ` +
        `${measuredFor(report)} · ${report.startedAt}`,
    ),
    ...nodeFlagsLine(report.servers),
    '',
    figuresTable(report.servers),
  ];
  if (report.runs) lines.push('', bold(`over ${report.runs.count} runs in a row (the table above is the last run; verdicts on the median ratio)`), runsTable(report));
  const measured = report.servers.filter((s) => s.load);
  if (measured.length > 0) lines.push('', bold('req/s'), bars(report.servers));
  // A soak's seconds are too many for one line: its section shows them window by window.
  const steady = measured.filter((s) => !s.soak);
  if (steady.some((s) => (s.load?.perSecond.length ?? 0) >= 4)) {
    const what = report.turns ? 'req/s turn by turn' : 'req/s second by second, measured phase';
    lines.push('', bold(`${what} (each server to its own scale)`), perSecondLines(steady));
  }
  for (const server of report.servers.filter((s) => s.ramp)) lines.push('', rampSection(server));
  if (report.servers.some((s) => s.runtime)) {
    lines.push('', bold('runtime, from the injected probe (measured phase)'), runtimeTable(report.servers));
    if (report.servers.some((s) => (s.heap?.bytesPerSecond ?? 0) < 0)) {
      lines.push(dim(`heap growth below zero: ${heapGrowth.means} (workshop help figures)`));
    }
  }
  // A server of more than one process (09's cluster): each one's cores and event loop, so one busy
  // worker and an idle one are told apart from two busy ones.
  const multi = report.servers.filter((s) => (s.processes?.length ?? 0) > 1);
  if (multi.length > 0) {
    const span = report.turns ? 'its turns' : 'measured phase';
    lines.push('', bold(`processes of each server, from /proc and each process's probe (${span})`), ...multi.map(processesLine));
  }
  const resting = report.servers.filter((s) => s.betweenTurns);
  if (resting.length > 0) {
    lines.push('', bold("cores each server's processes used while the others took their turns"), resting.map(restingFigure).join(' · '));
  }
  const othered = report.servers.filter((s) => s.othersInTurns);
  if (othered.length > 0) {
    lines.push('', bold("cores other programs used during each server's turns (the median turn)"), othered.map(othersFigure).join(' · '));
  }
  for (const server of report.servers) if (server.soak) lines.push('', soakSection(server));
  const sampled = report.servers.filter((s) => s.answers);
  if (sampled.length > 0) {
    lines.push('', bold('answers under load, held to the contract'));
    for (const server of sampled) {
      const { sampled: n, broken, keyed } = server.answers!;
      const again = server.checkAfterLoad ? (server.checkAfterLoad.ok ? '; the probe after the load passed' : `; ${red('the probe after the load failed')}`) : '';
      const copies = keyed ? `; ${keyed.repeated === 0 ? 'none' : integer(keyed.repeated)} of all ${integer(keyed.answers)} answers repeated another's ${keyed.what}` : '';
      lines.push(`${server.label}: ${broken === 0 && n > 0 ? green('✓') : red('✗')} ${integer(n - broken)} of ${integer(n)} sampled answers kept it${copies}${again}`);
    }
  }
  const afterLoad = report.servers.filter((s) => s.afterLoad?.ok);
  if (afterLoad.length > 0) {
    lines.push('', bold('after the load'));
    for (const server of afterLoad) {
      const [first, ...rest] = server.afterLoad!.passed;
      lines.push(`${server.label}: ${green('✓')} ${first}${rest.length > 0 ? dim(` (and ${rest.length} more checks)`) : ''}`);
    }
  }
  const failures = report.servers.filter((s) => s.failure || (s.check && !s.check.ok) || (s.checkAfterLoad && !s.checkAfterLoad.ok) || (s.afterLoad && !s.afterLoad.ok));
  for (const server of failures) lines.push('', serverProblems(server));
  if (report.verdicts.length > 0) {
    lines.push('', bold('verdict'));
    for (const verdict of report.verdicts) lines.push(renderVerdict(verdict, report.servers));
    const runs = report.runs ? dim(` (passed in ${report.runs.passedRuns} of ${report.runs.count} runs on its own)`) : '';
    const cannot = report.verdicts.find((v) => v.cannotJudge)?.cannotJudge;
    const overall = bold(overallWord(report));
    lines.push('', (report.pass ? green(overall) : report.tooClose ? yellow(overall) : red(overall)) + runs);
    if (report.tooClose && cannot) lines.push(`This machine cannot judge it (${cannot}). Exit code 3.`);
    else if (report.tooClose) {
      lines.push(
        `A target's interval still straddled its threshold after ${report.turns?.rounds ?? 'the most'} rounds: this machine cannot tell ` +
          'a pass from a fail here. Run verify again on a quieter machine (close what else runs), or take the figures as a sign the fix is ' +
          'close but not clearly there. Exit code 3.',
      );
    }
  } else if (!report.pass) {
    lines.push('', red(bold('FAIL')));
  }
  return lines.join('\n');
}

/** Each server's req/s and p99 in every run, the median and the spread (coefficient of variation). */
function runsTable(report: RunReport): string {
  const rows = Object.entries(report.runs!.figures).map(([label, f]) => [
    label,
    integer(f.requestsPerSecond.median),
    `±${percent(f.requestsPerSecond.cv, 0)}`,
    f.requestsPerSecond.values.map((v) => integer(v)).join(', '),
    integer(f.latencyP99.median),
    `±${percent(f.latencyP99.cv, 0)}`,
    f.latencyP99.values.map((v) => integer(v)).join(', '),
  ]);
  return table(['server', 'req/s median', 'spread', 'each run', 'p99 ms median', 'spread', 'each run'], rows, [false, true, true, false, true, true, false]);
}

function figuresTable(servers: ServerRun[]): string {
  const rows = servers.map((s) => {
    const l = s.load;
    const status = s.failure ? red('failed') : s.check && !s.check.ok ? red('wrong answers') : l ? '' : dim('not loaded');
    if (!l) return [s.label, s.title, '', '', '', '', '', '', '', '', status];
    const problems = l.errors + l.timeouts + l.non2xx;
    return [
      s.label,
      s.title,
      integer(l.requestsPerSecond.mean),
      integer(l.requestsPerSecond.stdev),
      latency(l.latency.p50),
      latency(l.latency.p90),
      latency(l.latency.p99),
      latency(l.latency.max),
      (l.bytesPerSecond / 1e6).toFixed(1),
      problems > 0 ? red(`${l.errors}/${l.timeouts}/${l.non2xx}`) : '0/0/0',
      status,
    ];
  });
  return table(
    ['server', 'what', 'req/s', '±sd', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'MB/s', 'err/timeout/non2xx', ''],
    rows,
    [false, false, true, true, true, true, true, true, true, true, false],
  );
}

/** autocannon's whole milliseconds as they are; times measured per answer to a tenth under 10 ms. */
function latency(ms: number): string {
  return Number.isInteger(ms) || ms >= 10 ? integer(ms) : ms.toFixed(1);
}

function bars(servers: ServerRun[]): string {
  const max = Math.max(...servers.map((s) => s.load?.requestsPerSecond.mean ?? 0));
  const width = Math.max(...servers.map((s) => s.label.length));
  return servers
    .map((s) => {
      const value = s.load?.requestsPerSecond.mean;
      if (value === undefined) return `${padEnd(s.label, width)}  ${dim('(not measured)')}`;
      return `${padEnd(s.label, width)}  ${padEnd(bar(value, max), 40)}  ${integer(value)}`;
    })
    .join('\n');
}

/** "QUERYWRAP 3,412, TCPWRAP 30": the largest counts first, at most `limit` types. */
function byType(counts: Record<string, number>, limit = 6): string {
  return Object.entries(counts)
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([type, count]) => `${type} ${integer(count)}`)
    .join(', ');
}

function perSecondLines(servers: ServerRun[]): string {
  const width = Math.max(...servers.map((s) => s.label.length));
  return servers
    .map((s) => {
      const seconds = s.load?.perSecond ?? [];
      const range = seconds.length > 0 ? `${integer(seconds[0]!)} → ${integer(seconds.at(-1)!)}` : '';
      return `${padEnd(s.label, width)}  ${sparkline(seconds)}  ${dim(range)}`;
    })
    .join('\n');
}

/** A ramp's steps: offered against answered, latency, which steps kept up, and the knee. */
export function rampSection(server: ServerRun): string {
  const ramp = server.ramp!;
  const rows = ramp.steps.map((step, index) => {
    const behind = step.behind;
    const mark = (ramp.knee?.step === index ? bold(' ◀ knee') : '') + (step.settle ? dim(' · placing the knee') : '');
    return [
      integer(step.offered),
      integer(step.achieved),
      step.latency.p50.toFixed(0),
      step.latency.p99.toFixed(0),
      padEnd(bar(step.achieved, Math.max(...ramp.steps.map((s) => Math.max(s.offered, s.achieved))), 24), 24),
      (behind ? yellow(`behind: ${behind}`) : green('keeps up')) + mark,
    ];
  });
  const knee = ramp.knee
    ? `knee: ${bold(`${integer(ramp.knee.rate ?? ramp.knee.achieved)} req/s`)} (kept up at ${integer(ramp.knee.offered)} req/s; ${ramp.knee.reason})`
    : yellow(ramp.steps[0]?.behind ? 'no knee: behind from the first step; start the ramp lower' : 'no knee: it kept up with every step; ramp higher');
  const cliff = ramp.cliff !== undefined ? ` · p99 at the highest rate ${ratio(ramp.cliff)} its low-load p99 (${ramp.lowLoadP99.toFixed(0)} ms)` : '';
  const seconds = ramp.steps.reduce((sum, s) => sum + s.seconds, 0);
  // Steps measured while other programs kept the machine busy were measured again (see ramp.ts BUSY_CORES).
  const again = ramp.remeasured?.length
    ? [dim(`measured again, other programs busy on the machine: ${ramp.remeasured.map((s) => `${integer(s.offered)} req/s (${(s.elsewhere ?? 0).toFixed(1)} cores)`).join(', ')}`)]
    : [];
  return [
    bold(`${server.label}: ramp ${integer(ramp.from)} → ${integer(ramp.to)} req/s, ${ramp.steps.length} steps in ${integer(seconds)} s`),
    table(['offered req/s', 'answered', 'p50 ms', 'p99 ms', 'answered', ''], rows, [true, true, true, true, false, false]),
    `p99 by rate  ${sparkline(ramp.steps.map((s) => s.latency.p99))}`,
    ...again,
    knee + dim(cliff),
  ].join('\n');
}

function restingFigure(server: ServerRun): string {
  const { cores, atMost } = server.betweenTurns!;
  const figure = `${server.label} ${cores.toFixed(2)}`;
  if (atMost === undefined) return figure;
  return cores <= atMost ? `${figure} ${dim(`(at most ${atMost.toFixed(2)})`)}` : red(`${figure} (at most ${atMost.toFixed(2)})`);
}

function othersFigure(server: ServerRun): string {
  const figure = `${server.label} ${server.othersInTurns!.cores.toFixed(2)}`;
  return othersInTurnsProblem(server) ? red(figure) : figure;
}

function processesLine(server: ServerRun): string {
  const each = server.processes!.map(
    (p) => `${p.role === 'main' ? 'main' : `${p.role} ${p.pid}`} ${p.cores.toFixed(2)} cores${p.utilization !== undefined ? `, loop busy ${percent(p.utilization, 0)}` : ''}`,
  );
  return `${server.label}: ${each.join(' · ')}`;
}

function runtimeTable(servers: ServerRun[]): string {
  // Only exercises that ask for it (probe.asyncResources) count async resources; the column shows then.
  const withAsync = servers.some((s) => s.runtime?.pendingPeak);
  const rows = servers.map((s) => {
    const r = s.runtime;
    if (!r) return [s.label, dim(s.load ? 'no answer from the probe' : ''), '', '', '', '', '', '', ...(withAsync ? [''] : [])];
    return [
      s.label,
      megabytes(r.heapUsed),
      s.heap ? `${(s.heap.bytesPerSecond / 1e6).toFixed(2)} MB/s` : '',
      `${percent(r.gc.minor.share)} (${r.gc.minor.count})`,
      `${percent(r.gc.major.share)} (${r.gc.major.count})`,
      r.eventLoopDelay.p50.toFixed(1),
      r.eventLoopDelay.p99.toFixed(1),
      byType(r.activeResourcesPeak ?? r.activeResources),
      ...(withAsync ? [byType(r.pendingPeak ?? {}, 4)] : []),
    ];
  });
  return table(
    [
      'server', 'heap used', 'heap growth', 'minor GC (n)', 'major GC (n)', 'loop delay p50 ms', 'p99 ms',
      'active resources (peak)', ...(withAsync ? ['async resources in flight (peak, async_hooks)'] : []),
    ],
    rows,
    [false, true, true, true, true, true, true, false, false],
  );
}

function serverProblems(server: ServerRun): string {
  const lines = [red(`${server.label} (${server.file}):`)];
  if (server.failure) lines.push(`  ${server.failure}`);
  for (const failure of server.check?.failures ?? []) lines.push(`  ✗ ${failure}`);
  for (const failure of server.checkAfterLoad?.failures ?? []) lines.push(`  ✗ the probe after the load: ${failure}`);
  for (const failure of server.afterLoad?.failures ?? []) lines.push(`  ✗ after the load: ${failure}`);
  if (server.output?.trim()) {
    lines.push(dim('  what the server printed (last lines):'));
    lines.push(...server.output.trimEnd().split('\n').slice(-20).map((l) => dim(`  │ ${l}`)));
  }
  return lines.join('\n');
}

export function renderVerdict(verdict: ServerVerdict, servers: ServerRun[]): string {
  const server = servers.find((s) => s.label === verdict.label);
  const status = verdict.symptom
    ? verdict.pass
      ? yellow('SHOWS THE BUG')
      : red('DOES NOT SHOW THE BUG as the exercise expects')
    : verdict.expectedToFail
    ? verdict.expectedToFail.rejected
      ? yellow('REJECTED, AS EXPECTED')
      : red('NOT REJECTED: it was expected to fail')
    : verdict.pass
      ? green('PASS')
      : verdict.cannotJudge
      ? yellow('CANNOT BE JUDGED HERE')
      : verdict.tooClose
      ? yellow('TOO CLOSE TO CALL')
      : red('FAIL');
  const head = `${bold(verdict.label)}${server ? ` · ${server.title}` : ''}  ${status}`;
  const rows = verdict.targets.map((t) => targetRow(t, server));
  const lines = [head];
  if (rows.length > 0) {
    lines.push(
      ...table(['  target', 'measured', 'needs', 'in this run', 'margin', ''], rows, [false, true, true, true, true, false])
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  for (const problem of verdict.problems) lines.push(`    ${red('✗')} ${problem}`);
  for (const noisy of verdict.targets.filter((t) => t.noisy)) {
    lines.push(
      `    ${yellow('⚠')} ${noisy.name}: its margin (${signedPercent(noisy.margin!)}) is within ${NOISE_SPREADS} run-to-run spreads ` +
        `(±${percent(noisy.spread!.cv, 0)}) of the target, so this machine is too noisy to call it: run again with more --runs, or on a quieter machine`,
    );
  }
  if (verdict.cannotJudge) lines.push(`    ${yellow('why:')} ${verdict.cannotJudge}`);
  if (verdict.notExpectedHere) lines.push(`    ${yellow('note:')} ${verdict.notExpectedHere}`);
  if (verdict.expectedToFail) lines.push(`    ${yellow('why it is shown:')} ${verdict.expectedToFail.why}`);
  return lines.join('\n');
}

function targetRow(result: TargetResult, server?: ServerRun): string[] {
  const { target } = result;
  const bound = target.atLeast !== undefined ? `≥ ${ratio(target.atLeast)}` : `≤ ${ratio(target.atMost!)}`;
  const shown = result.shown ?? {};
  if (target.against === 'itself') {
    // A ratio of the server's own moments: show the two figures it was taken from.
    return [
      `  ${result.name}`,
      result.ratio !== undefined ? ratio(result.ratio) : '-',
      bound,
      result.detail ?? '',
      result.margin !== undefined ? signedPercent(result.margin) : '',
      targetStatus(result),
    ];
  }
  const now =
    result.requiredValue !== undefined
      ? `${target.atLeast !== undefined ? '≥' : '≤'} ${shown.requiredValue ?? integer(result.requiredValue)} (${result.referenceLabel} ${shown.referenceValue ?? integer(result.referenceValue!)})`
      : '';
  return [
    `  ${result.name}`,
    result.ratio !== undefined ? `${ratio(result.ratio)} (${shown.value ?? integer(result.value!)})` : '-',
    bound,
    now,
    result.margin !== undefined ? signedPercent(result.margin) : '',
    targetStatus(result),
  ];
}

/**
 * ok or short, and in turns the interval of the median ratio over the rounds; with --runs, the ratio's
 * run-to-run spread, and a warning when it is too close to call.
 */
function targetStatus(result: TargetResult): string {
  const status = result.pass ? green('ok') : result.tooClose ? yellow('too close to call') : result.note ? yellow(result.note) : red('short');
  if (result.rounds) return `${status} ${dim(`(${intervalText(result)})`)}`;
  if (!result.spread) return status;
  const spreadText = dim(`(${result.spread.values.map((v) => ratio(v)).join(', ')}; spread ±${percent(result.spread.cv, 0)})`);
  return `${status} ${spreadText}${result.noisy ? ` ${yellow('⚠ too noisy to call')}` : ''}`;
}

/** "a 180 s soak" when the run was a soak (its seconds replace the manifest's measured phase). */
function rampedFor(report: RunReport): string | undefined {
  const ramp = report.servers.find((s) => s.ramp)?.ramp;
  return ramp ? `a ramp from ${integer(ramp.from)} to ${integer(ramp.to)} req/s offered` : undefined;
}

/** The connections the servers were loaded with: turns may set their own (LoadProfile.turns.connections). */
export function connectionsFor(report: RunReport): number {
  const { load } = report;
  return (report.turns && load.turns && load.turns.connections) || load.connections;
}

/** "2 s warm-up + 7 rounds of 1 s turns (at most 7)": how the servers of a report were loaded. */
export function measuredFor(report: RunReport): string {
  const { load } = report;
  return `${load.warmupSeconds} s warm-up + ${rampedFor(report) ?? soakedFor(report) ?? turnsFor(report) ?? `${load.durationSeconds} s measured`}`;
}

/** "1.09x to 1.55x over 7 rounds, 88% interval": a ratio's interval, for a target judged round by round. */
export function intervalText(result: TargetResult): string {
  const rounds = result.rounds;
  if (!rounds) return '';
  return `${ratio(rounds.low)} to ${ratio(rounds.high)} over ${rounds.ratios.length} rounds, ${Math.round(rounds.confidence * 100)}% interval`;
}

function turnsFor(report: RunReport): string | undefined {
  const turns = report.turns;
  if (!turns) return undefined;
  const shipped = turns.brokenRounds !== undefined ? `; the shipped server ${turns.brokenRounds}, the same age in every run` : '';
  const more = turns.moreRoundsFor ? `; more rounds for ${turns.moreRoundsFor.join(', ')}, too close to call` : '';
  return `${turns.rounds} rounds of ${turns.seconds} s turns (at most ${turns.maxRounds}${shipped}${more})`;
}

function soakedFor(report: RunReport): string | undefined {
  const soak = report.servers.find((s) => s.soak)?.soak;
  return soak ? `a ${soak.seconds} s soak` : undefined;
}

/** A soak: its windows (the first and last few when there are many), each trend with its sparkline, the verdict. */
export function soakSection(server: ServerRun): string {
  const soak = server.soak!;
  const { windows, trends } = soak;
  const ended = soak.endedAfter !== undefined ? `  ${red(`the server exited after ${soak.endedAfter} s`)}` : '';
  const ran = soak.endedAfter !== undefined ? `${soak.endedAfter} of ${soak.seconds} s` : `${soak.seconds} s`;
  const count = `${windows.length} window${windows.length === 1 ? '' : 's'} of ${soak.windowSeconds} s`;
  const lines = [bold(`soak · ${server.label} · ${ran} in ${count}`) + ended];
  const heapText = (bytes: number | null) => (bytes === null ? dim('n/a') : (bytes / 1e6).toFixed(1));
  const gcText = (share: number | null) => (share === null ? dim('n/a') : percent(share));
  const shown = windows.length > 12 ? [...windows.slice(0, 5), undefined, ...windows.slice(-5)] : windows;
  const rows = shown.map((w) =>
    w
      ? [
          `${w.startSecond}-${w.startSecond + w.seconds} s`,
          integer(w.requestsPerSecond),
          integer(w.latencyP99),
          heapText(w.heapUsed),
          gcText(w.gcShare),
          w.majorGcs === null ? dim('n/a') : String(w.majorGcs),
        ]
      : [dim(`… ${windows.length - 10} more`), '', '', '', '', ''],
  );
  lines.push(table(['window', 'req/s', 'p99 ms', 'heap MB (lowest)', 'GC share', 'major GCs'], rows, [false, true, true, true, true, true]));
  const values = (pick: (w: (typeof windows)[number]) => number | null) => windows.map(pick).filter((v): v is number => v !== null);
  const span = (list: number[], show: (v: number) => string) => (list.length > 0 ? `${show(list[0]!)} → ${show(list.at(-1)!)}` : '');
  const signed = (v: number, text: string) => `${v >= 0 ? '+' : ''}${text}`;
  const figures = [
    { name: 'req/s', list: values((w) => w.requestsPerSecond), show: integer, trend: trends.requestsPerSecond, slope: (v: number) => signed(v, integer(v)) },
    { name: 'p99 ms', list: values((w) => w.latencyP99), show: integer, trend: trends.latencyP99, slope: (v: number) => signed(v, `${v.toFixed(1)} ms`) },
    {
      name: 'heap MB',
      list: values((w) => w.heapUsed),
      // First and last of the windows the trend is fitted on (those with a major GC, when enough had one;
      // all windows for a result recorded before the soak kept them).
      ends: trends.heapUsed.fittedOn?.map((i) => windows[i]!.heapUsed!),
      show: (v: number) => (v / 1e6).toFixed(0),
      trend: trends.heapUsed,
      slope: (v: number) => signed(v, `${(v / 1e6).toFixed(1)} MB`),
    },
    { name: 'GC share', list: values((w) => w.gcShare), show: (v: number) => percent(v), trend: trends.gcShare, slope: (v: number) => signed(v, `${(v * 100).toFixed(1)} points`) },
  ];
  const trendRows = figures.map((f) => [
    f.name,
    sparkline(f.list),
    span(('ends' in f ? f.ends : undefined) ?? f.list, f.show),
    f.slope(f.trend.slopePerMinute),
    Number.isFinite(f.trend.change) ? ratio(f.trend.change) : 'n/a',
    f.trend.degrading ? red('degrading') : green('steady'),
  ]);
  lines.push('', table(['trend', 'over the soak', 'first → last window', 'slope a minute', 'last/first', ''], trendRows, [false, false, true, true, true, false]));
  const verdict = soak.verdict === 'degrading' ? red(bold('DEGRADING')) : green(bold('STEADY'));
  if (trends.heapUsed.basis === 'after-major') lines.push(dim('heap: the trend is fitted on the windows with a major GC, the heap after a full collection'));
  lines.push('', `${bold('soak verdict')} ${verdict}${soak.reasons.length > 0 ? `: ${soak.reasons.join('; ')}` : dim(': no figure drifted beyond its threshold')}`);
  for (const note of soak.notes ?? []) lines.push(`${yellow('note:')} ${note}`);
  return lines.join('\n');
}

/** How the run ended, in the words of the report's last line: the terminal's, the hub's and its live status. */
export function overallWord(report: RunReport): string {
  if (report.pass) return report.verdicts.length > 0 ? 'PASS' : 'measured';
  if (report.tooClose) return report.verdicts.some((v) => v.cannotJudge) ? 'CANNOT BE JUDGED HERE' : 'TOO CLOSE TO CALL';
  return 'FAIL';
}
