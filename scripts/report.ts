// Renders the result model: a terminal table with a bar per server, or JSON.
import { bar, bold, sparkline, dim, green, integer, megabytes, padEnd, percent, ratio, red, signedPercent, table, yellow } from './format.ts';
import type { RunReport, ServerRun, ServerVerdict, TargetResult } from './result.ts';
import { formatMetric, quarters } from './verdict.ts';

export function renderJson(report: RunReport): string {
  return JSON.stringify(report, null, 2);
}

export function renderReport(report: RunReport): string {
  const { load } = report;
  const lines = [
    bold(`Exercise ${report.exercise.id} · ${report.exercise.title}`),
    dim(
      `Node ${report.node} · ${load.method ?? 'GET'} ${load.path} · ${load.connections} connections · ` +
        `${load.warmupSeconds} s warm-up + ${load.durationSeconds} s measured · ${report.startedAt}`,
    ),
    '',
    figuresTable(report.servers),
  ];
  const measured = report.servers.filter((s) => s.load);
  if (measured.length > 0) lines.push('', bold('req/s'), bars(report.servers));
  if (measured.some((s) => (s.load?.perSecond.length ?? 0) >= 4)) {
    lines.push('', bold('req/s second by second, measured phase (each server to its own scale)'), perSecondLines(measured));
  }
  if (report.servers.some((s) => s.runtime)) lines.push('', bold('runtime, from the injected probe (measured phase)'), runtimeTable(report.servers));
  const afterLoad = report.servers.filter((s) => s.afterLoad?.ok);
  if (afterLoad.length > 0) {
    lines.push('', bold('after the load'));
    for (const server of afterLoad) {
      const [first, ...rest] = server.afterLoad!.passed;
      lines.push(`${server.label}: ${green('✓')} ${first}${rest.length > 0 ? dim(` (and ${rest.length} more checks)`) : ''}`);
    }
  }
  const failures = report.servers.filter((s) => s.failure || (s.check && !s.check.ok) || (s.afterLoad && !s.afterLoad.ok));
  for (const server of failures) lines.push('', serverProblems(server));
  if (report.verdicts.length > 0) {
    lines.push('', bold('verdict'));
    for (const verdict of report.verdicts) lines.push(renderVerdict(verdict, report.servers));
    lines.push('', report.pass ? green(bold('PASS')) : red(bold('FAIL')));
  } else if (!report.pass) {
    lines.push('', red(bold('FAIL')));
  }
  return lines.join('\n');
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
      String(l.latency.p50),
      String(l.latency.p90),
      String(l.latency.p99),
      String(l.latency.max),
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
  for (const failure of server.afterLoad?.failures ?? []) lines.push(`  ✗ after the load: ${failure}`);
  if (server.output?.trim()) {
    lines.push(dim('  what the server printed (last lines):'));
    lines.push(...server.output.trimEnd().split('\n').slice(-20).map((l) => dim(`  │ ${l}`)));
  }
  return lines.join('\n');
}

export function renderVerdict(verdict: ServerVerdict, servers: ServerRun[]): string {
  const server = servers.find((s) => s.label === verdict.label);
  const status = verdict.expectedToFail
    ? verdict.expectedToFail.rejected
      ? yellow('REJECTED, AS EXPECTED')
      : red('NOT REJECTED: it was expected to fail')
    : verdict.pass
      ? green('PASS')
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
  if (verdict.notExpectedHere) lines.push(`    ${yellow('note:')} ${verdict.notExpectedHere}`);
  if (verdict.expectedToFail) lines.push(`    ${yellow('why it is shown:')} ${verdict.expectedToFail.why}`);
  return lines.join('\n');
}

function targetRow(result: TargetResult, server?: ServerRun): string[] {
  const { target } = result;
  const bound = target.atLeast !== undefined ? `≥ ${ratio(target.atLeast)}` : `≤ ${ratio(target.atMost!)}`;
  const show = (value: number) => formatMetric(target.metric, value);
  if (target.against === 'itself') {
    // A ratio of the server's own moments: show the two figures it was taken from.
    const q = server ? quarters(server) : undefined;
    const status = result.pass ? green('ok') : result.note ? yellow(result.note) : red('short');
    return [
      `  ${result.name}`,
      result.ratio !== undefined ? ratio(result.ratio) : '-',
      bound,
      q ? `early ${integer(q.early)} → late ${integer(q.late)} req/s` : '',
      result.margin !== undefined ? signedPercent(result.margin) : '',
      status,
    ];
  }
  const now =
    result.requiredValue !== undefined
      ? `${target.atLeast !== undefined ? '≥' : '≤'} ${show(result.requiredValue)} (${result.referenceLabel} ${show(result.referenceValue!)})`
      : '';
  const status = result.pass ? green('ok') : result.note ? yellow(result.note) : red('short');
  return [
    `  ${result.name}`,
    result.ratio !== undefined ? `${ratio(result.ratio)} (${show(result.value!)})` : '-',
    bound,
    now,
    result.margin !== undefined ? signedPercent(result.margin) : '',
    status,
  ];
}
