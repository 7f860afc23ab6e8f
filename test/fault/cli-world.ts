/**
 * A throwaway world for driving the real CLI as a child process: a workspace,
 * a `$BRIDLE_HOME`, scripted-model files, and helpers to watch the session
 * log from outside and to kill the child at a chosen point.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../sweep/prng.js';
import { tempDir } from '../helpers/temp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The compiled CLI (`npm test` builds it first; from `dist/test/fault/`, as the soak runs it, the CLI is beside it); `BRIDLE_CLI` points elsewhere. */
export const CLI =
  process.env.BRIDLE_CLI ?? [path.resolve(here, '../../dist/cli/main.js'), path.resolve(here, '../../cli/main.js')].find((p) => fs.existsSync(p)) ?? path.resolve(here, '../../dist/cli/main.js');
export const cliBuilt = fs.existsSync(CLI);

export interface World {
  root: string;
  workspace: string;
  home: string;
  script(name: string, body: object): string;
  /** The session's log under `$BRIDLE_HOME/sessions` (not a subagent's), once it exists. */
  logPath(): string | undefined;
  log(): string;
  marker(): string[];
  /** `as`: run the CLI as another user (a root test can then meet permissions root would bypass); `env`: more variables, or other values. */
  spawn(args: string[], opts?: { as?: { uid: number; gid: number }; env?: NodeJS.ProcessEnv; stdin?: boolean }): Child;
  cleanup(): void;
}

export interface Child {
  proc: ChildProcess;
  stderr(): string;
  stdout(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function createWorld(): World {
  const root = fs.realpathSync(tempDir('bridle-fault-'));
  const workspace = path.join(root, 'ws');
  const home = path.join(root, 'home');
  fs.mkdirSync(workspace);
  fs.mkdirSync(home);
  const sessions = path.join(home, 'sessions');
  const w: World = {
    root,
    workspace,
    home,
    script(name, body) {
      const file = path.join(root, name);
      fs.writeFileSync(file, JSON.stringify(body));
      return file;
    },
    logPath() {
      if (!fs.existsSync(sessions)) return undefined;
      // A subagent's log is named after its parent's id and more: the session's own is the shortest name.
      const f = fs.readdirSync(sessions).filter((n) => n.endsWith('.jsonl')).sort((a, b) => a.length - b.length || a.localeCompare(b))[0];
      return f && path.join(sessions, f);
    },
    log() {
      const p = w.logPath();
      return p ? fs.readFileSync(p, 'utf8') : '';
    },
    marker() {
      const f = path.join(workspace, 'marker');
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
    },
    spawn(args, opts = {}) {
      const proc = spawn(process.execPath, [CLI, ...args], {
        cwd: root,
        env: { ...withoutModel(process.env), BRIDLE_HOME: home, ...opts.env },
        stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        ...(opts.as ? { uid: opts.as.uid, gid: opts.as.gid } : {}),
      });
      let err = '';
      let out = '';
      proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
      return { proc, stderr: () => err, stdout: () => out, exit };
    },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
  return w;
}

/** Runs the CLI in `w` to its exit: the exit code and all it printed, stdout then stderr. */
export async function runToExit(w: World, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = w.spawn(args);
  const { code } = await child.exit;
  return { code, out: `${child.stdout()}${child.stderr()}` };
}

function withoutModel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { BRIDLE_MODEL: _m, ...rest } = env;
  return rest;
}

/** Polls until `cond` holds; throws after `ms`. */
export async function waitFor(cond: () => boolean, ms = 10_000, what = 'a condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Whether the log holds a line of `kind` (and, if given, for `callId`). */
export const logHas = (text: string, kind: string, callId?: string) =>
  text.split('\n').some((l) => l.includes(`"kind":"${kind}"`) && (callId === undefined || l.includes(`"callId":"${callId}"`)));

/** The complete lines of a log text: what a reader has seen written. */
export const completeLines = (text: string) => text.slice(0, text.lastIndexOf('\n') + 1).split('\n').slice(0, -1);

/** A small seeded generator (the sweep's mulberry32, ADR 0003), so a failing seed reproduces. */
export const seeded = mulberry32;
