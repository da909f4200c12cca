// The baseline of `workshop measure`: a command as the config gives it, or a git revision of the service's
// repository checked out apart (git worktree add --detach, in a temporary folder) and built the way the
// service is, then removed after the run. The repository's own work tree is not touched.
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandStart } from './command-start.ts';
import type { Baseline, ServiceStart } from './measure-config.ts';
import { UsageError } from './usage-error.ts';

export interface PreparedBaseline {
  /** What the report calls it: "git HEAD (3f2c1aa)", or its command. */
  title: string;
  start: CommandStart;
  /** Removes what was checked out for it. */
  remove(): Promise<void>;
}

/** Runs a shell command in `cwd`; its output when it fails, in the error. */
export function shell(command: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`"${command}" in ${cwd} exited with code ${code}:\n${output.trim().split('\n').slice(-15).join('\n')}`)),
    );
  });
}

export async function prepareBaseline(baseline: Baseline, service: ServiceStart, serviceCwd: string, configDir: string): Promise<PreparedBaseline> {
  if ('command' in baseline) {
    const cwd = path.resolve(configDir, baseline.cwd ?? '.');
    return { title: baseline.command, start: { command: baseline.command, cwd, env: baseline.env }, remove: async () => {} };
  }
  const root = (await shell('git rev-parse --show-toplevel', serviceCwd).catch(() => '')).trim();
  if (!root) throw new UsageError(`baseline.git needs the service's folder (${serviceCwd}) to be in a git repository`);
  const commit = (await shell(`git rev-parse --short ${quote(`${baseline.git}^{commit}`)}`, root).catch(() => '')).trim();
  if (!commit) throw new UsageError(`baseline.git: "${baseline.git}" is not a revision of ${root}`);
  const folder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-baseline-'));
  const tree = path.join(folder, 'tree');
  const remove = async () => {
    await shell(`git worktree remove --force ${quote(tree)}`, root).catch(() => {});
    rmSync(folder, { recursive: true, force: true });
    await shell('git worktree prune', root).catch(() => {});
  };
  try {
    await shell(`git worktree add --detach ${quote(tree)} ${commit}`, root);
    // git names the repository by its real path (macOS's /tmp is /private/tmp).
    const cwd = path.join(tree, path.relative(root, realpathSync(serviceCwd)));
    if (service.build) await shell(service.build, cwd);
    return { title: `git ${baseline.git} (${commit})`, start: { command: service.command, cwd, env: service.env }, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
