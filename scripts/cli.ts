// The workshop CLI: `npm run workshop -- <command>`, or the `workshop` bin.
import { parseArgs, type CommandSpec, type ParsedArgs } from './args.ts';
import type { ServerChoice } from './bench.ts';
import { demo } from './commands/demo.ts';
import { hint } from './commands/hint.ts';
import { list, nextExercise } from './commands/list.ts';
import { reset } from './commands/reset.ts';
import { run } from './commands/run.ts';
import { solution } from './commands/solution.ts';
import { verify } from './commands/verify.ts';
import { watch } from './commands/watch.ts';
import { loadAllExercises, loadExercise, resolveExerciseId, type Exercise } from './exercises.ts';
import { bold, dim, red } from './format.ts';
import { ServerStartError, killAllNow, stopAll } from './server-process.ts';
import { removeServiceDataNow } from './services/index.ts';
import { nearest } from './suggest.ts';
import { UsageError } from './usage-error.ts';

const JSON_FLAG = { json: { description: 'print the result as JSON on stdout (progress stays on stderr)' } };
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
      ...TRACE_FLAG,
      ...JSON_FLAG,
    },
  },
  verify: { summary: 'correctness probe, load and verdict for your server.ts; exit code 0 on a pass', args: ['<ex>'], flags: { ...TRACE_FLAG, ...JSON_FLAG } },
  watch: { summary: 'verify now and on every save of server.ts (default: the next unsolved exercise)', args: ['[ex]'], flags: { ...TRACE_FLAG } },
  hint: { summary: 'show the next hint, from gentle to explicit', args: ['<ex>'], flags: {} },
  solution: { summary: 'what each reference stage changes, with its diff (after a pass, or with --force)', args: ['<ex>'], flags: { force: { description: 'show it before you have passed' } } },
  reset: { summary: 'restore server.ts to the shipped broken server', args: ['<ex>'], flags: { yes: { description: 'do not ask for confirmation' } } },
  demo: { summary: 'for instructors: broken, every stage and the ceiling under the same load, side by side', args: ['<ex>'], flags: { ...JSON_FLAG } },
  start: { summary: 'the list, then watch mode on the next unsolved exercise (what npm start runs)', args: [], flags: {} },
  help: { summary: 'this help, or one command\'s: workshop help run', args: ['[command]'], flags: {} },
};

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
    dim('<ex> is an exercise: 01, 1 or its name (etag-listener-leak). "workshop help <command>" shows its flags.'),
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

async function exerciseArg(args: ParsedArgs): Promise<Exercise> {
  return loadExercise(resolveExerciseId(args.positionals[0]!));
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMANDS);
  const nodeFlags = args.flags['trace-warnings'] ? ['--trace-warnings'] : [];
  const json = args.flags.json === true;
  switch (args.command) {
    case 'help':
      process.stdout.write(`${helpText(args.positionals[0])}\n`);
      return 0;
    case 'list':
      return list(await loadAllExercises());
    case 'start': {
      const exercises = await loadAllExercises();
      list(exercises, { watchingNext: true });
      const next = nextExercise(exercises);
      return next ? watch(next) : 0;
    }
    case 'run': {
      const exercise = await exerciseArg(args);
      const choice = stageChoice(args.flags.stage, exercise);
      const load = args.flags.load === true;
      if (args.flags.port !== undefined && load) throw new UsageError('--port is for a server you call yourself; --load picks a free port');
      return run(exercise, { choice, port: portOption(args.flags.port), load, json, nodeFlags });
    }
    case 'verify':
      return (await verify(await exerciseArg(args), { json, nodeFlags })).pass ? 0 : 1;
    case 'watch': {
      const exercise = args.positionals[0] ? await exerciseArg(args) : nextExercise(await loadAllExercises());
      if (!exercise) {
        process.stdout.write('Every exercise passed. Name one to watch it anyway: npm run workshop -- watch 01\n');
        return 0;
      }
      return watch(exercise, nodeFlags);
    }
    case 'hint':
      return hint(await exerciseArg(args));
    case 'solution':
      return solution(await exerciseArg(args), args.flags.force === true);
    case 'reset':
      return reset(await exerciseArg(args), args.flags.yes === true);
    case 'demo':
      return (await demo(await exerciseArg(args), { json })).pass ? 0 : 1;
    default:
      throw new UsageError(`unknown command "${args.command}"`);
  }
}

function installSignalHandlers(): void {
  // Servers run in their own process groups, so Ctrl-C reaches only this process: end them, then leave.
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: stopping the servers...\n`);
    const force = setTimeout(() => process.exit(code), 5000);
    void stopAll().finally(() => {
      clearTimeout(force);
      process.exit(code);
    });
  };
  process.on('SIGINT', () => onSignal('SIGINT', 130));
  process.on('SIGTERM', () => onSignal('SIGTERM', 143));
  process.on('SIGHUP', () => onSignal('SIGHUP', 129));
  process.on('exit', () => {
    killAllNow();
    removeServiceDataNow();
  });
}

export async function cli(): Promise<void> {
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
