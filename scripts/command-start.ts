// How a server started by a shell command (`workshop measure`: a team's own service) gets what an exercise
// server gets from `node --import tsx --import inject.ts file`: the probe comes in through NODE_OPTIONS, so
// every Node process the command starts loads it, and the IPC channel is the child's fd 3, which the
// command's Node process inherits (NODE_CHANNEL_FD). The Node process that serves must be the one to take
// that channel: `node app.js`, `exec node ...` in a script; not npm or npx, which are Node themselves and
// take it first (docs/measure.md).
import { pathToFileURL } from 'node:url';

/** A shell command, run by /bin/sh in `cwd`, that starts a server listening on process.env.PORT. */
export interface CommandStart {
  command: string;
  cwd?: string;
  env?: Record<string, string>;
}

const PROBE_ENTRY = pathToFileURL(new URL('./probe/standalone.js', import.meta.url).pathname).href;

/** The program, its arguments and the environment to spawn a command's server with, the probe in it. */
export function commandSpawn(start: CommandStart, nodeFlags: string[], env: NodeJS.ProcessEnv): { program: string; args: string[]; cwd?: string; env: Record<string, string> } {
  // Flags go the same way as the probe; NODE_OPTIONS takes most of Node's (not all: node --help says which).
  const nodeOptions = [start.env?.NODE_OPTIONS ?? env.NODE_OPTIONS, ...nodeFlags, `--import=${JSON.stringify(PROBE_ENTRY)}`].filter(Boolean).join(' ');
  return { program: '/bin/sh', args: ['-c', execOf(start.command)], cwd: start.cwd, env: { ...start.env, NODE_OPTIONS: nodeOptions } };
}

/**
 * A simple command (a program and its arguments) runs in the shell's place, `exec`: the harness's child is
 * then the server itself, as for an exercise, and its signals and figures are the server's. A command with
 * operators or a leading VAR=value stays under the shell, which ends with it.
 */
export function execOf(command: string): string {
  const simple = !/[;&|<>()$`\\\n]/.test(command) && !/^\s*\S*=/.test(command);
  return simple ? `exec ${command.trim()}` : command;
}
