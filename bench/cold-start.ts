/**
 * CLI cold start: `node dist/cli/main.js …` as a user's shell (or the e2e suite) runs it. `--version` answers
 * before the program loads; the other commands load what their action needs (ADR 0099), so each is timed on
 * its own: the median wall time of `n` spawns, and the ES modules the process loaded, counted by a module hook
 * (Node's `module.register`, given with `--import`) in one more spawn, which is not timed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './stats.js';

const MAIN = fileURLToPath(new URL('../cli/main.js', import.meta.url));

export function coldStartMs(): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [MAIN, '--version'], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`bridle --version failed: ${r.stderr}`);
  return ms;
}

export interface CommandStart {
  command: string;
  medianMs: number;
  /** ES modules loaded, all of them and those under node_modules/ (a CommonJS package's own `require`s are not seen). */
  modules: number;
  nodeModules: number;
}

/** The commands a user (and the e2e suite) starts most, each as it is typed; `dir` holds their homes, workspace and script. */
function commands(dir: string, golden: string): Array<{ command: string; args: string[]; home: string }> {
  const home = (name: string) => {
    mkdirSync(join(dir, name), { recursive: true });
    return join(dir, name);
  };
  const ws = home('ws');
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ responses: [{ text: 'Nothing to do.' }] }));
  return [
    { command: '--help', args: ['--help'], home: home('help') },
    { command: 'run --help', args: ['run', '--help'], home: home('help') },
    { command: 'sessions', args: ['sessions'], home: home('sessions') },
    { command: 'replay <golden log>', args: ['replay', golden], home: home('replay') },
    { command: 'run (scripted, one step)', args: ['run', '--cwd', ws, '--model', `scripted:${script}`, '--approval', 'never', '--sandbox', 'off', 'say hi'], home: home('run') },
  ];
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`bridle ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return ms;
}

/** The URLs of the modules `bridle <args>` loads, in load order. */
export function modulesLoaded(args: string[], env: NodeJS.ProcessEnv = {}): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'bridle-modules-'));
  try {
    const out = join(dir, 'urls.txt');
    const hook = join(dir, 'hook.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(out, '');
    // The load hook runs on the hooks thread and appends each URL it loads to `out`.
    writeFileSync(hook, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(out)}, url + '\\n'); return next(url, context); }\n`);
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
    spawnCli(args, { ...env, NODE_OPTIONS: `--import ${pathToFileURL(register).href}` });
    return [...new Set(readFileSync(out, 'utf8').split('\n').filter((u) => u && !u.startsWith('node:') && !u.startsWith('data:')))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each command's median wall time over `n` spawns and the modules it loads. */
export function commandStarts(n = 10): CommandStart[] {
  const dir = mkdtempSync(join(tmpdir(), 'bridle-cold-start-'));
  try {
    const golden = fileURLToPath(new URL('../../test/golden/flaky-checkout.jsonl', import.meta.url));
    return commands(dir, golden).map(({ command, args, home }) => {
      const env = { BRIDLE_HOME: home };
      const urls = modulesLoaded(args, env);
      const times: number[] = [];
      for (let i = 0; i < n; i++) times.push(spawnCli(args, env));
      return { command, medianMs: median(times), modules: urls.length, nodeModules: urls.filter((u) => u.includes('/node_modules/')).length };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `node dist/bench/cold-start.js`: these figures alone, one line a command.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2] ?? 10);
  for (const s of commandStarts(n)) process.stdout.write(`${s.command.padEnd(26)} median ${s.medianMs.toFixed(0).padStart(5)} ms over ${n}  ${String(s.modules).padStart(4)} modules (${s.nodeModules} from node_modules)\n`);
}
