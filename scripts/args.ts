// Parses `workshop <command> [args] [--flags]` against each command's declared flags; mistakes become
// UsageErrors that name the nearest valid spelling.
import { nearest } from './suggest.ts';
import { UsageError } from './usage-error.ts';

export interface FlagSpec {
  /** Name of the value it takes, e.g. "N"; absent for a switch. */
  value?: string;
  description: string;
}

export interface CommandSpec {
  summary: string;
  /** Positional arguments, e.g. ["<ex>"] or ["[ex]"]. */
  args: string[];
  flags: Record<string, FlagSpec>;
}

export interface ParsedArgs {
  command: string;
  positionals: string[];
  flags: Record<string, string | true>;
}

export function parseArgs(argv: string[], commands: Record<string, CommandSpec>): ParsedArgs {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { command: 'help', positionals: [], flags: {} };
  if (!(first in commands)) {
    const guess = nearest(first, Object.keys(commands));
    throw new UsageError(`unknown command "${first}".${guess ? ` Did you mean "${guess}"?` : ''} Run "workshop help" for the list.`);
  }
  const spec = commands[first]!;
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--help' || arg === '-h') return { command: 'help', positionals: [first], flags: {} };
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [name, inlineValue] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const flag = spec.flags[name];
    if (!flag) {
      const guess = nearest(name, Object.keys(spec.flags));
      const known = Object.keys(spec.flags).map((f) => `--${f}`).join(', ') || 'none';
      throw new UsageError(`unknown flag "--${name}" for "${first}".${guess ? ` Did you mean "--${guess}"?` : ''} Its flags: ${known}.`);
    }
    if (flag.value) {
      const value = inlineValue ?? rest[++i];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value: --${name} ${flag.value}`);
      flags[name] = value;
    } else {
      if (inlineValue !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
    }
  }
  const required = spec.args.filter((a) => a.startsWith('<')).length;
  if (positionals.length < required) throw new UsageError(`"${first}" needs ${spec.args.join(' ')}, e.g. workshop ${first} 01`);
  if (positionals.length > spec.args.length) throw new UsageError(`"${first}" takes ${spec.args.length || 'no'} argument(s), got: ${positionals.join(' ')}`);
  return { command: first, positionals, flags };
}
