// The workshop CLI: `npm run workshop -- <command>`, or the `workshop` bin.
import { parseArgs, type CommandSpec, type ParsedArgs } from './args.ts';
import type { ServerChoice } from './bench.ts';
import type { RampRequest } from './ramp.ts';
import { parseDuration } from './soak.ts';
import { loadAllExercises, loadExercise, resolveExerciseId, type Exercise } from './exercises.ts';
import { formerIdNote } from './former-ids.ts';
import { bold, dim, red } from './format.ts';
import { ServerStartError, killAllNow, stopAll } from './server-process.ts';
import { removeServiceDataNow } from './services/index.ts';
import { TOOLS, type ProfileTool } from './profile/tools.ts';
import { nearest } from './suggest.ts';
import { hasInterruptHooks, runInterruptHooks } from './interrupt.ts';
import type { RunReport } from './result.ts';
import { UsageError } from './usage-error.ts';
import { shippedMetrics } from './shipped-metrics.ts';
import { figureMeanings } from './verdict.ts';

// Each command's module is imported when it runs: `list` or `hint` need not load the load generator,
// the profilers and the hub.
const command = {
  artillery: () => import('./commands/artillery.ts'),
  demo: () => import('./commands/demo.ts'),
  doctor: () => import('./commands/doctor.ts'),
  exportLoad: () => import('./commands/export-load.ts'),
  hint: () => import('./commands/hint.ts'),
  list: () => import('./commands/list.ts'),
  measure: () => import('./commands/measure.ts'),
  profile: () => import('./commands/profile.ts'),
  profileDiff: () => import('./commands/profile-diff.ts'),
  reset: () => import('./commands/reset.ts'),
  run: () => import('./commands/run.ts'),
  solution: () => import('./commands/solution.ts'),
  start: () => import('./commands/start.ts'),
  verify: () => import('./commands/verify.ts'),
  watch: () => import('./commands/watch.ts'),
};

const JSON_FLAG = { json: { description: 'print the result as JSON on stdout (progress stays on stderr)' } };
const RUNS_FLAG = {
  runs: { value: 'N', description: 'measure N times in a row (1-10, default 1): the verdict on the median, the spread (CV) beside each figure, a warning when the machine is too noisy' },
};
const TRACE_FLAG = { 'trace-warnings': { description: 'start the server with node --trace-warnings' } };

export const COMMANDS: Record<string, CommandSpec> = {
  list: { summary: 'the exercises, your progress, and the next one', args: [], flags: {} },
  run: {
    summary: 'start a server and print its URL (Ctrl-C stops it), or put it under load with --load',
    args: ['<ex>'],
    flags: {
      stage: { value: 'N|broken|mine|ceiling', description: 'which server: a solution stage, the shipped broken one, your file (default), or the ceiling' },
      port: { value: 'PORT', description: 'port on 127.0.0.1 to listen on (default 3000; --load picks a free one)' },
      load: { description: "run the exercise's load once (warm-up, then measured) and print the figures" },
      soak: {
        value: 'DURATION',
        description:
          "keep the exercise's load up for DURATION (90s, 3m, 1m30s or 180; 10 s to 60 min) and report req/s, p99, heap and GC share " +
          'window by window, their trends and whether the server degrades; writes the JSON and SVG charts under .hotpath/results/',
      },
      ramp: {
        description:
          "raise the offered rate step by step and find the knee, where the server stops keeping up (the exercise's ramp, " +
          'else 10% to 200% of what the warm-up reached); writes the JSON and SVG charts under .hotpath/results/',
      },
      from: { value: 'REQ/S', description: 'with --ramp: the first step\'s offered rate' },
      to: { value: 'REQ/S', description: 'with --ramp: the last step\'s offered rate' },
      over: { value: 'DURATION', description: 'with --ramp: how many rates the climb has, one per 2 s (or the exercise\'s step) of this (40s, 2m)' },
      ...TRACE_FLAG,
      ...JSON_FLAG,
    },
  },
  verify: {
    summary: 'correctness probe, load and verdict for your server.ts; exit code 0 on a pass, 1 on a fail, 3 when too close to call',
    args: ['<ex>'],
    flags: {
      ...RUNS_FLAG,
      ...TRACE_FLAG,
      ...JSON_FLAG,
      stretch: { description: "hold your file to the last reference stage's targets (against the stage before it and the ceiling), once you have passed" },
    },
  },
  watch: { summary: 'verify now and on every save of server.ts (default: the list, then the next unsolved exercise)', args: ['[ex]'], flags: { ...TRACE_FLAG } },
  hint: { summary: 'show the next hint, from gentle to explicit', args: ['<ex>'], flags: {} },
  solution: { summary: 'what each reference stage changes, with its diff (after a pass, or with --force)', args: ['<ex>'], flags: { force: { description: 'show it before you have passed' } } },
  reset: { summary: 'restore server.ts to the shipped broken server', args: ['<ex>'], flags: { yes: { description: 'do not ask for confirmation' } } },
  profile: {
    summary: "run a server under the exercise's load with a profiler and write a report to open in a browser",
    args: ['<ex>'],
    flags: {
      stage: { value: 'N|broken|mine|ceiling', description: 'which server: a solution stage, the shipped broken one, your file (default), or the ceiling' },
      tool: {
        value: TOOLS.join('|'),
        description:
          'flame (clinic flame: where the CPU time goes), doctor (clinic doctor: CPU, memory, event-loop delay over time), ' +
          "heap (clinic heapprofiler: what allocated the memory), cpu (node --cpu-prof as a flame graph at lines of your .ts file, any Node). " +
          'Default: cpu; a clinic tool known broken on this Node falls back to cpu',
      },
      'trace-warnings': { description: 'start the server with node --trace-warnings and show the warnings it printed' },
      diff: {
        description:
          'profile two servers under the same load, the shipped one and yours (or --stage), with --cpu-prof, and draw one differential flame graph: ' +
          "the shipped server's shape, coloured by what each frame's time per answer became",
      },
    },
  },
  doctor: {
    summary: "run a server under the exercise's load and name the kind of problem its figures show, with the evidence and the tool to use next",
    args: ['<ex>'],
    flags: {
      stage: { value: 'N|broken|mine|ceiling', description: 'which server: a solution stage, the shipped broken one, your file (default), or the ceiling' },
      ...JSON_FLAG,
    },
  },
  measure: {
    summary:
      "your own service against a baseline (a command or a git revision) under the config's load, probe and targets; " +
      'the report and exit code of verify (docs/measure.md)',
    args: ['<config>'],
    flags: { ...RUNS_FLAG, ...JSON_FLAG },
  },
  demo: { summary: 'for instructors: broken, every stage and the ceiling under the same load, side by side', args: ['<ex>'], flags: { ...RUNS_FLAG, ...JSON_FLAG } },
  start: {
    summary: 'the hub in the browser: exercises, progress, slides and live runs (what npm start runs)',
    args: [],
    flags: { port: { value: 'PORT', description: 'port on 127.0.0.1 for the hub (default 4000; the exercise servers use 3000)' } },
  },
  'export-load': {
    summary: "the exercise's load (or a measure config's) as an Artillery script, for a load beyond one machine; writes files only (docs/artillery.md)",
    args: ['<ex|config>'],
    flags: {
      ramp: { description: "the exercise's ramp (else its steady load) as arrival-rate phases" },
      from: { value: 'REQ/S', description: "with --ramp: the first step's offered rate (needed, with --to, for an exercise without a ramp of its own)" },
      to: { value: 'REQ/S', description: "with --ramp: the last step's offered rate" },
      over: { value: 'DURATION', description: "with --ramp: how many rates the ramp has, one per step's seconds of this (40s, 2m)" },
      duration: { value: 'DURATION', description: "the steady load's measured time (90s, 5m, 1m30s or 300; default the exercise's)" },
      connections: { value: 'N', description: "the steady load's connections, a virtual user each (default the exercise's); per worker in a distributed run" },
      target: { value: 'URL', description: 'the server the script loads (default http://127.0.0.1:3000)' },
      out: { value: 'FILE', description: 'the script to write, .yml, .yaml or .json (default .hotpath/artillery/<ex>[-ramp].yml); hotpath-load.cjs goes beside it' },
      ...JSON_FLAG,
    },
  },
  artillery: {
    summary: 'run the pinned Artillery with these arguments, telemetry off; installs it into .hotpath/tools/ on first use (e.g. workshop artillery run --output report.json <script>)',
    args: ['[args...]'],
    flags: {},
  },
  help: { summary: 'this help, one command\'s (workshop help run), or what each figure means (workshop help figures)', args: ['[command]'], flags: {} },
};

/** `help figures`: the metrics the workshop ships, with what each means. */
export async function figuresHelp(): Promise<string> {
  const lines = figureMeanings(await shippedMetrics()).map((line) => `  ${line}`);
  return [bold('The figures a target can be set on'), '', ...lines, '', dim('Every target is a ratio to a server measured in the same run: docs/measuring.md.')].join('\n');
}

export function helpText(command?: string): string {
  if (command) {
    const spec = COMMANDS[command];
    if (!spec) {
      const guess = nearest(command, Object.keys(COMMANDS));
      throw new UsageError(`unknown command "${command}".${guess ? ` Did you mean "${guess}"?` : ''}`);
    }
    const flags = Object.entries(spec.flags).map(([name, f]) => `  --${name}${f.value ? ` ${f.value}` : ''}\n      ${f.description}`);
    return [`workshop ${command} ${spec.args.join(' ')}`.trimEnd(), `  ${spec.summary}`, ...(flags.length ? ['', 'flags:', ...flags] : [])].join('\n');
  }
  const width = Math.max(...Object.keys(COMMANDS).map((c) => `${c} ${COMMANDS[c]!.args.join(' ')}`.length));
  const lines = Object.entries(COMMANDS).map(([name, spec]) => `  ${`${name} ${spec.args.join(' ')}`.padEnd(width)}  ${spec.summary}`);
  return [
    bold('Hot Path: a hands-on Node.js performance workshop'),
    '',
    'usage: npm run workshop -- <command> [args] [flags]   (or: npx workshop <command>)',
    '',
    ...lines,
    '',
    dim('<ex> is an exercise: 01, 1 or its name (seed-service-slows-down). "workshop help <command>" shows its flags.'),
  ].join('\n');
}

function stageChoice(value: string | true | undefined, exercise: Exercise): ServerChoice {
  if (value === undefined || value === true) return 'mine';
  if (value === 'broken' || value === 'mine' || value === 'ceiling') return value;
  const count = exercise.manifest.stages.length;
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= count) return Number(value);
  const names = ['broken', 'mine', 'ceiling', ...exercise.manifest.stages.map((_, i) => String(i + 1))];
  const guess = nearest(value, names);
  throw new UsageError(`unknown stage "${value}" for ${exercise.manifest.id}.${guess ? ` Did you mean "${guess}"?` : ''} Stages: ${names.join(', ')}.`);
}

function portOption(value: string | true | undefined): number {
  if (value === undefined || value === true) return 3000;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port must be a whole number from 1 to 65535, got "${value}"`);
  return port;
}

/** `--ramp` with its optional `--from`, `--to`, `--over`: a partial ramp the bench completes from the exercise. */
function rampOption(args: ParsedArgs, exercise: Exercise): RampRequest | undefined {
  const { from, to, over } = args.flags;
  if (!args.flags.ramp) {
    const stray = Object.entries({ from, to, over }).find(([, value]) => value !== undefined);
    if (stray) throw new UsageError(`--${stray[0]} goes with --ramp`);
    return undefined;
  }
  const rate = (name: string, value: string | true | undefined) => {
    if (value === undefined) return undefined;
    const number = Number(value);
    if (!Number.isFinite(number) || number < 1 || number > 100_000) throw new UsageError(`--${name} is a rate in requests per second, 1 to 100000; got "${value}"`);
    return Math.round(number);
  };
  const request: RampRequest = { from: rate('from', from), to: rate('to', to) };
  if (over !== undefined) request.seconds = parseDuration(String(over), 'over', 4, 600);
  const base = exercise.manifest.load.ramp;
  const [low, high] = [request.from ?? base?.from, request.to ?? base?.to];
  if (low !== undefined && high !== undefined && high <= low) throw new UsageError(`--to (${high} req/s) must be above --from (${low} req/s)`);
  return request;
}

function toolOption(value: string | true | undefined): ProfileTool | undefined {
  if (value === undefined || value === true) return undefined;
  if ((TOOLS as readonly string[]).includes(value)) return value as ProfileTool;
  const guess = nearest(value, [...TOOLS]);
  throw new UsageError(`unknown tool "${value}".${guess ? ` Did you mean "${guess}"?` : ''} Tools: ${TOOLS.join(', ')}.`);
}

function runsOption(value: string | true | undefined): number {
  if (value === undefined || value === true) return 1;
  const runs = Number(value);
  if (!Number.isInteger(runs) || runs < 1 || runs > 10) throw new UsageError(`--runs must be a whole number from 1 to 10, got "${value}"`);
  return runs;
}

async function exerciseArg(args: ParsedArgs): Promise<Exercise> {
  const id = resolveExerciseId(args.positionals[0]!, undefined, (input, current) => console.error(formerIdNote(input, current)));
  return loadExercise(id);
}

/** 0 on a pass, 3 when a target was too close to call (or this machine cannot judge it), 1 on a fail. */
export function exitCodeOf(report: RunReport): number {
  return report.pass ? 0 : report.tooClose ? 3 : 1;
}

export async function main(argv: string[]): Promise<number> {
  // Everything after `artillery` is Artillery's own arguments: not parsed here.
  if (argv[0] === 'artillery') return (await command.artillery()).artilleryCommand(argv.slice(1));
  const args = parseArgs(argv, COMMANDS);
  const nodeFlags = args.flags['trace-warnings'] ? ['--trace-warnings'] : [];
  const json = args.flags.json === true;
  switch (args.command) {
    case 'help':
      process.stdout.write(`${args.positionals[0] === 'figures' ? await figuresHelp() : helpText(args.positionals[0])}\n`);
      return 0;
    case 'list':
      return (await command.list()).list(await loadAllExercises());
    case 'start': {
      const { hubPortOption, start } = await command.start();
      return start(hubPortOption(args.flags.port));
    }
    case 'run': {
      const exercise = await exerciseArg(args);
      const choice = stageChoice(args.flags.stage, exercise);
      const soak = args.flags.soak !== undefined ? parseDuration(String(args.flags.soak)) : undefined;
      const ramp = rampOption(args, exercise);
      if (ramp && soak !== undefined) throw new UsageError('--ramp and --soak are two different runs: choose one');
      const load = args.flags.load === true || soak !== undefined || ramp !== undefined;
      if (args.flags.port !== undefined && load) throw new UsageError('--port is for a server you call yourself; --load and --soak pick a free port');
      return (await command.run()).run(exercise, { choice, port: portOption(args.flags.port), load, json, nodeFlags, soak, ramp });
    }
    case 'verify':
      return exitCodeOf(await (await command.verify()).verify(await exerciseArg(args), { json, nodeFlags, runs: runsOption(args.flags.runs), stretch: args.flags.stretch === true }));
    case 'watch': {
      // Without an exercise: the list, then the next unsolved one (what npm start did before the hub).
      const all = args.positionals[0] ? undefined : await loadAllExercises();
      const { list, nextExercise } = await command.list();
      if (all) list(all, { watchingNext: true });
      const exercise = all ? nextExercise(all) : await exerciseArg(args);
      if (!exercise) {
        process.stdout.write('Every exercise passed. Name one to watch it anyway: npm run workshop -- watch 01\n');
        return 0;
      }
      return (await command.watch()).watch(exercise, nodeFlags);
    }
    case 'hint':
      return (await command.hint()).hint(await exerciseArg(args));
    case 'solution':
      return (await command.solution()).solution(await exerciseArg(args), args.flags.force === true);
    case 'reset':
      return (await command.reset()).reset(await exerciseArg(args), args.flags.yes === true);
    case 'profile': {
      const exercise = await exerciseArg(args);
      const choice = stageChoice(args.flags.stage, exercise);
      if (args.flags.diff === true) {
        if (args.flags.tool !== undefined && args.flags.tool !== 'cpu') throw new UsageError('--diff draws two --tool cpu profiles; leave out --tool');
        if (args.flags['trace-warnings'] !== undefined) throw new UsageError('--trace-warnings goes with one profile, not --diff');
        if (choice === 'broken') throw new UsageError('--diff compares the shipped server with another: --stage N, ceiling or mine (the default)');
        return (await command.profileDiff()).profileDiff(exercise, { after: choice });
      }
      return (await command.profile()).profile(exercise, { choice, tool: toolOption(args.flags.tool), traceWarnings: args.flags['trace-warnings'] === true });
    }
    case 'doctor': {
      const exercise = await exerciseArg(args);
      return (await command.doctor()).doctor(exercise, { choice: stageChoice(args.flags.stage, exercise), json });
    }
    case 'export-load':
      return (await command.exportLoad()).exportLoadCommand(args);
    case 'measure':
      return exitCodeOf(await (await command.measure()).measure(args.positionals[0]!, { json, runs: runsOption(args.flags.runs) }));
    case 'demo':
      return exitCodeOf(await (await command.demo()).demo(await exerciseArg(args), { json, runs: runsOption(args.flags.runs) }));
    default:
      throw new UsageError(`unknown command "${args.command}"`);
  }
}

function installSignalHandlers(): void {
  // Servers run in their own process groups, so Ctrl-C reaches only this process: end them, then leave.
  let stopping = false;
  const onSignal = (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${why}: stopping the servers...\n`);
    // The hub's live run may take its worker's grace period (10 s) to end; other commands stop in 2 s.
    const force = setTimeout(() => process.exit(code), hasInterruptHooks() ? 15_000 : 5000);
    void runInterruptHooks().then(() => stopAll()).finally(() => {
      clearTimeout(force);
      process.exit(code);
    });
  };
  process.on('SIGINT', () => onSignal('SIGINT', 130));
  process.on('SIGTERM', () => onSignal('SIGTERM', 143));
  process.on('SIGHUP', () => onSignal('SIGHUP', 129));
  // SIGTERM to npm alone (a supervisor, an editor's stop button) ends npm's `sh -c` but never reaches this
  // process, which init adopts: a changed parent pid is the only sign, so it ends everything as for SIGTERM.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) onSignal(`the parent process (pid ${parent}) ended`, 143);
  }, 250).unref();
  process.on('exit', () => {
    killAllNow();
    removeServiceDataNow();
  });
}

/**
 * The harness ends servers by process group and reads POSIX signals: native Windows has neither. Said at
 * start, in a sentence, rather than as a failure halfway through a run (docs/platforms.md).
 */
export function unsupportedPlatform(platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'win32') {
    return 'Hot Path runs on Linux and macOS. On Windows, run it inside WSL2 (a Linux distribution, e.g. Ubuntu: `wsl --install`), or open the repository in its dev container (.devcontainer/).';
  }
  return undefined;
}

export async function cli(): Promise<void> {
  const unsupported = unsupportedPlatform();
  if (unsupported) {
    process.stderr.write(`${red('error:')} ${unsupported}\n`);
    process.exitCode = 2;
    return;
  }
  installSignalHandlers();
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${red('error:')} ${error.message}\n`);
      process.exitCode = 2;
    } else if (error instanceof ServerStartError) {
      process.stderr.write(`${red('error:')} ${error.message}\n${error.output ? dim(error.output.trimEnd()) + '\n' : ''}`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`${red('error:')} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  } finally {
    await stopAll();
  }
}
