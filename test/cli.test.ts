import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../scripts/args.ts';
import { COMMANDS, figuresHelp, helpText, main, unsupportedPlatform } from '../scripts/cli.ts';
import { stretchText } from '../scripts/commands/verify.ts';
import { ROOT } from '../scripts/paths.ts';
import { resolveExerciseId } from '../scripts/exercises.ts';
import { UsageError } from '../scripts/usage-error.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { isAlive } from './helpers.ts';
import { tempFolder } from './temp-folder.ts';

const stateDir = tempFolder('hotpath-cli-');
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
beforeAll(() => {
  env.HOTPATH_PROGRESS_FILE = path.join(stateDir(), 'progress.json');
});

function workshop(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/workshop.ts', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without waiting: for commands that put no load on the machine, run side by side. */
function workshopAsync(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/workshop.ts', ...args], { cwd: ROOT, env, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('argument parsing', () => {
  it('parses a command, its argument and its flags', () => {
    expect(parseArgs(['run', '01', '--stage', '2', '--load'], COMMANDS)).toEqual({ command: 'run', positionals: ['01'], flags: { stage: '2', load: true } });
    expect(parseArgs(['run', '1', '--stage=broken'], COMMANDS).flags.stage).toBe('broken');
    expect(parseArgs([], COMMANDS).command).toBe('help');
    expect(parseArgs(['verify', '--help'], COMMANDS)).toEqual({ command: 'help', positionals: ['verify'], flags: {} });
  });

  it('names the nearest valid spelling of a wrong command or flag', () => {
    expect(() => parseArgs(['verfy', '01'], COMMANDS)).toThrow(/unknown command "verfy". Did you mean "verify"\?/);
    expect(() => parseArgs(['run', '01', '--stag', '1'], COMMANDS)).toThrow(/unknown flag "--stag" for "run". Did you mean "--stage"\?/);
    expect(() => parseArgs(['run', '01', '--stage'], COMMANDS)).toThrow(/--stage needs a value/);
    expect(() => parseArgs(['verify'], COMMANDS)).toThrow(/"verify" needs <ex>/);
    expect(() => parseArgs(['hint', '01', '02'], COMMANDS)).toThrow(/takes 1 argument/);
    expect(() => parseArgs(['reset', '01', '--yes=no'], COMMANDS)).toThrow(UsageError);
  });

  it('accepts 01, 1 and the slug for an exercise, and suggests the nearest for a typo', () => {
    const ids = ['01-seed-service-slows-down', '02-floating-upload'];
    expect(resolveExerciseId('01', ids)).toBe('01-seed-service-slows-down');
    expect(resolveExerciseId('1', ids)).toBe('01-seed-service-slows-down');
    expect(resolveExerciseId('seed-service-slows-down', ids)).toBe('01-seed-service-slows-down');
    // A former id, and its name without the number, for one release, with a note.
    const heard: string[] = [];
    expect(resolveExerciseId('01-etag-listener-leak', ids, (input, id) => heard.push(`${input} -> ${id}`))).toBe('01-seed-service-slows-down');
    expect(resolveExerciseId('etag-listener-leak', ids, (input, id) => heard.push(`${input} -> ${id}`))).toBe('01-seed-service-slows-down');
    expect(heard).toEqual(['01-etag-listener-leak -> 01-seed-service-slows-down', 'etag-listener-leak -> 01-seed-service-slows-down']);
    expect(resolveExerciseId('01-seed-service-slows-down', ids)).toBe('01-seed-service-slows-down');
    expect(() => resolveExerciseId('seed-servce-slows-down', ids)).toThrow(/Did you mean "seed-service-slows-down"\?/);
    expect(() => resolveExerciseId('7', ids)).toThrow(/unknown exercise "7". Exercises: 01-seed-service-slows-down, 02-floating-upload/);
  });

  it('refuses native Windows at start with a sentence that points to WSL2, and runs on Linux and macOS', () => {
    expect(unsupportedPlatform('win32')).toMatch(/WSL2/);
    expect(unsupportedPlatform('linux')).toBeUndefined();
    expect(unsupportedPlatform('darwin')).toBeUndefined();
  });

  it("after a pass, names what the last reference stage reaches and how to measure against it, without its fix", () => {
    const text = stretchText(
      [
        { metric: requestsPerSecond, against: 'previous', atLeast: 1.12 },
        { metric: requestsPerSecond, against: 'ceiling', atLeast: 0.65 },
      ],
      2,
      '01',
    );
    expect(text).toContain("the reference's stage 2 reaches");
    expect(text).toContain("req/s ≥ 1.12x reference stage 1's");
    expect(text).toContain("req/s ≥ 0.65x the ceiling's");
    expect(text).toContain('npm run workshop -- verify 01 --stretch');
  });

  it('has help for every command', async () => {
    for (const command of Object.keys(COMMANDS)) expect(helpText(command)).toContain(`workshop ${command}`);
    expect(helpText()).toContain('usage: npm run workshop');
    // help figures: every figure a target can be set on (the metrics scripts/metrics/ ships), with what it means.
    const figures = await figuresHelp();
    for (const name of ['req/s', 'p99 latency', 'heap growth', 'scavenge time per request', 'throughput kept', 'knee']) expect(figures).toContain(`${name} (`);
    expect(figures).toMatch(/heap growth .*below zero/);
  });
});

describe('the workshop command', () => {
  it('exits 2 with a clear message on a usage error', async () => {
    const cases = [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['verify', 'seed-service-slow-down'], 'Did you mean "seed-service-slows-down"?'],
      [['run', '01', '--stage', '9'], 'unknown stage "9"'],
      [['run', '01', '--port', 'eighty'], '--port must be a whole number'],
      [['demo', '01', '--jsn'], 'Did you mean "--json"?'],
      [['verify', '01', '--runs', '0'], '--runs must be a whole number from 1 to 10'],
      [['run', '01', '--from', '10'], '--from goes with --ramp'],
      [['run', '01', '--ramp', '--from', '50', '--to', '20'], '--to (20 req/s) must be above --from (50 req/s)'],
      [['run', '01', '--ramp', '--over', 'soon'], '--over takes a duration like 90s'],
      [['run', '01', '--ramp', '--soak', '1m'], '--ramp and --soak are two different runs'],
      [['verify', '05', '--stretch'], 'exercise 05 has no stretch targets'],
    ] as const;
    // Two through the command itself (exit code 2, the message on stderr); the rest in process, the same
    // UsageError the command turns into that exit, without starting Node and tsx eleven times.
    const spawned = cases.slice(0, 2);
    const results = await Promise.all(spawned.map(([args]) => workshopAsync(...args)));
    spawned.forEach(([args, message], i) => {
      expect(results[i]!.code, args.join(' ')).toBe(2);
      expect(results[i]!.stderr).toContain(message);
    });
    for (const [args, message] of cases.slice(2)) {
      const error = await main([...args]).catch((e: unknown) => e);
      expect(error, args.join(' ')).toBeInstanceOf(UsageError);
      expect(String(error)).toContain(message);
    }
  });

  it('refuses --diff with another tool, with --trace-warnings or against the shipped server, before any load (in process)', async () => {
    await expect(main(['profile', '01', '--diff', '--tool', 'flame'])).rejects.toThrow(/--diff draws two --tool cpu profiles/);
    await expect(main(['profile', '01', '--diff', '--trace-warnings'])).rejects.toThrow(/--trace-warnings goes with one profile/);
    await expect(main(['profile', '01', '--diff', '--stage', 'broken'])).rejects.toThrow(/--diff compares the shipped server with another/);
    await expect(main(['doctor', '01', '--stage', '7'])).rejects.toThrow(UsageError);
  });

  it.runIf(existsSync('/usr/bin/taskset'))('on one core, verify 09 says why it cannot judge a fix that spreads work over cores, before any load', () => {
    const started = Date.now();
    const result = spawnSync('taskset', ['-c', '0', process.execPath, '--import', 'tsx', 'scripts/workshop.ts', 'verify', '09'], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(3);
    expect(result.stdout).toContain('CANNOT BE JUDGED HERE');
    expect(result.stdout).toContain('the server has 1 core here and this target needs 2');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('says so when reset finds the file as shipped', () => {
    const result = workshop('reset', '01', '--yes');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('exercises/01-seed-service-slows-down/server.ts is already as shipped');
  });

  it('lists the exercises and gives hints one at a time, remembering them', () => {
    expect(workshop('list').stdout).toMatch(/→\s+01-seed-service-slows-down.*not yet/);
    expect(workshop('hint', '01').stdout).toMatch(/Hint 1 of \d+/);
    const second = workshop('hint', '1');
    expect(second.stdout).toMatch(/Hint 1 of \d+[\s\S]*Hint 2 of \d+/);
    expect(workshop('list').stdout).toMatch(/2 hint\(s\) seen/);
  });

  it('keeps the solution locked until a pass, unless forced', () => {
    const locked = workshop('solution', '01');
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain('unlocks once your server passes');
    const forced = workshop('solution', '01', '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('Stage 1: fix the guard');
    expect(forced.stdout).toMatch(/^-\s+if \(res\.listenerCount\('after'\) > 0\) return;$/m);
    expect(forced.stdout).toMatch(/^\+\s+if \(afterEventAttached\) return;$/m);
  });

  it('leaves no server behind when interrupted with Ctrl-C during verify', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/workshop.ts', 'verify', '01'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Wait until a server is up and under load, then find it among the CLI's children.
    await expect.poll(() => stderr, { timeout: 30_000, interval: 100 }).toMatch(/warm-up/);
    const serverPids = () =>
      spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' })
        .stdout.split('\n')
        .map(Number)
        .filter((pid) => pid > 0);
    await expect.poll(serverPids, { timeout: 30_000, interval: 100 }).not.toEqual([]);
    const pids = serverPids();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('SIGINT: stopping the servers');
    for (const pid of pids) expect(isAlive(pid), `server ${pid} outlived the CLI`).toBe(false);
  });
});

describe('run: the commands it suggests', () => {
  it('carries the method, headers and body of the load', async () => {
    const { curlCommand, autocannonCommand } = await import('../scripts/commands/run.ts');
    const load = { path: '/tasks', method: 'POST' as const, body: `{"a":"it's"}`, headers: { 'content-type': 'application/json' }, connections: 30, warmupSeconds: 2, durationSeconds: 10 };
    expect(curlCommand('http://127.0.0.1:3000', load)).toBe(`curl -i -X POST -H 'content-type: application/json' -d '{"a":"it'\\''s"}' http://127.0.0.1:3000/tasks`);
    expect(autocannonCommand('http://127.0.0.1:3000', load)).toBe(
      `npx autocannon -c 30 -d 10 -m POST -H 'content-type=application/json' -b '{"a":"it'\\''s"}' http://127.0.0.1:3000/tasks`,
    );
    expect(curlCommand('http://x', { path: '/seed/v1', connections: 10, warmupSeconds: 2, durationSeconds: 5 })).toBe('curl -i http://x/seed/v1');
    // A query string would be cut at & by the shell: the URL is quoted then.
    expect(curlCommand('http://x', { path: '/decide?user=1&exp=a', connections: 10, warmupSeconds: 2, durationSeconds: 5 })).toBe(
      "curl -i 'http://x/decide?user=1&exp=a'",
    );
  });
});
