/**
 * AGENTS.md files: project instructions for agents, read from the project
 * root (the nearest ancestor holding `.git`, else the working directory) down
 * to the working directory, outermost first, so nearer files can refine
 * farther ones. In each directory an `AGENTS.override.md` stands in for the
 * `AGENTS.md` beside it (ADR 0060). Files in directories below the workspace
 * are not in the prompt: `nearestNestedAgentsFile` finds the one that governs
 * a directory a file tool touched, and `nested-agents.ts` adds it to that
 * call's result.
 *
 * They go into the system prompt, hence into every request and the log, with
 * no approval and no tool call: so they are read with the file tools'
 * confinement. Only a regular file with one link whose real path lies inside
 * the project root and outside bridle's home is read, and only its first
 * `AGENTS_MAX_BYTES`. A symlink `AGENTS.md -> /proc/self/environ` once put the
 * process's own API key into the prompt. Like the file tools (ADR 0011), the
 * file is pinned with `O_PATH` and checked through `/proc/self/fd/N` before it
 * is opened, so a FIFO cannot block and a swap after the check changes nothing.
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isInside } from '../../safety/paths.js';

export interface AgentsFile {
  /** Relative to the project root (`AGENTS.md`, `pkg/AGENTS.md`). */
  path: string;
  /** The file's text, or a bracketed note saying why it was not read. */
  text: string;
}

/** In one directory the first of these that is there wins: an override replaces, never adds to, the AGENTS.md beside it. */
export const AGENTS_NAMES = ['AGENTS.override.md', 'AGENTS.md'] as const;

/** The most read of one file; the prompt section cuts further (to 32,000 code points). */
export const AGENTS_MAX_BYTES = 256 * 1024;

/** Linux's `O_PATH`: pins the inode without opening it. */
const O_PATH = 0o10000000;

export function projectRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

/** `$BRIDLE_HOME` as spelled and as its real path: what a file read for the prompt must stay out of. */
export function homeForms(bridleHome: string | undefined): string[] {
  if (bridleHome === undefined) return [];
  const spelled = resolve(bridleHome);
  try {
    return [spelled, realpathSync(spelled)];
  } catch {
    return [spelled];
  }
}

const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MiB`;

/** The first `max` bytes of the file, cut on a character boundary. */
function readHead(fd: number, size: number, max: number, name: string): string {
  const buf = Buffer.alloc(Math.min(size, max) + 1);
  let got = 0;
  for (let n; got < buf.length && (n = readSync(fd, buf, got, buf.length - got, got)) > 0; ) got += n;
  if (got <= max) return buf.toString('utf8', 0, got);
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return `${buf.toString('utf8', 0, end)}\n[… ${name} is ${mib(size)}; only its first ${max / 1024} KiB were read …]`;
}

/** A confined read: the file's text, or a bracketed note saying why it was not read. */
export type ConfinedRead = { text: string } | { note: string };

/** The text of one AGENTS.md, a note when it is there but may not be read, undefined when there is none. */
function readConfined(file: string, root: string, homes: readonly string[], shown: string): string | undefined {
  const got = readConfinedFile(file, root, homes, shown);
  return got === undefined ? undefined : 'text' in got ? got.text : got.note;
}

/**
 * One file read as AGENTS.md is (pinned with `O_PATH`, a regular file with
 * one link, its real path inside `root` and outside every one of `homes`),
 * its first `max` bytes. Also what skills are read with (ADR 0064).
 * Contract: never throws and never blocks on a FIFO; undefined when there is no such file.
 */
export function readConfinedFile(file: string, root: string, homes: readonly string[], shown: string, max = AGENTS_MAX_BYTES): ConfinedRead | undefined {
  const note = (why: string): ConfinedRead => ({ note: `[not read: ${shown}${why}]` });
  if (process.platform !== 'linux') return existsSync(file) ? note(`: bridle reads files through /proc/self/fd, which ${process.platform} lacks`) : undefined;
  let pinned: number;
  try {
    pinned = openSync(file, O_PATH);
  } catch {
    return undefined; // absent, a dangling link, or unreadable: nothing to add
  }
  try {
    const stats = fstatSync(pinned);
    if (stats.isDirectory()) return undefined;
    const real = readlinkSync(`/proc/self/fd/${pinned}`);
    if (!isInside(root, real)) return note(` leads outside the project (to ${real})`);
    if (homes.some((home) => isInside(home, real))) return note(` leads into bridle's own home (${real})`);
    if (!stats.isFile()) return note(' is not a regular file');
    if (stats.nlink > 1) return note(` has ${stats.nlink} hard links; the other names may lie outside the project`);
    let fd: number;
    try {
      fd = openSync(`/proc/self/fd/${pinned}`, constants.O_RDONLY | constants.O_NOCTTY);
    } catch {
      return undefined;
    }
    try {
      return { text: readHead(fd, stats.size, max, basename(file)) };
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(pinned);
  }
}

/** One directory's instructions (the override when there is one), paths shown relative to `root`. */
function readDir(dir: string, root: string, homes: readonly string[]): AgentsFile | undefined {
  for (const name of AGENTS_NAMES) {
    const path = relative(root, join(dir, name));
    const text = readConfined(join(dir, name), root, homes, path);
    if (text !== undefined) return { path, text };
  }
  return undefined;
}

const below = (root: string, dir: string) => {
  const rel = relative(root, dir);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

/** Contract: never throws and never blocks on a FIFO; files that may not or cannot be read are skipped or noted. */
export function readAgentsFiles(cwd: string, root = projectRoot(cwd), bridleHome?: string): AgentsFile[] {
  const dirs = [root];
  if (below(root, cwd)) for (const part of relative(root, cwd).split(sep)) dirs.push(join(dirs[dirs.length - 1]!, part));
  const homes = homeForms(bridleHome);
  const out: AgentsFile[] = [];
  for (const dir of dirs) {
    const file = readDir(dir, root, homes);
    if (file) out.push(file);
  }
  return out;
}

/**
 * The instructions file that governs `dir` from strictly below the workspace:
 * the one in `dir` itself, else in its nearest ancestor that has one, up to
 * but not including the workspace (whose own and whose ancestors' files are
 * in the system prompt). Paths are relative to the workspace, and every file
 * is confined to it as the prompt's are (a link out is a note, never text).
 *
 * Contract: never throws and never blocks on a FIFO; undefined when `dir` is
 * not below the workspace or no file governs it.
 */
export function nearestNestedAgentsFile(workspace: string, dir: string, bridleHome?: string): AgentsFile | undefined {
  if (!below(workspace, dir)) return undefined;
  const homes = homeForms(bridleHome);
  for (let d = dir; below(workspace, d); d = dirname(d)) {
    const file = readDir(d, workspace, homes);
    if (file) return file;
  }
  return undefined;
}
