/**
 * AGENTS.md files: project instructions for agents, read from the project
 * root (the nearest ancestor holding `.git`, else the working directory) down
 * to the working directory, outermost first, so nearer files can refine
 * farther ones.
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
import { dirname, join, relative, resolve, sep } from 'node:path';
import { isInside } from '../../safety/paths.js';

export interface AgentsFile {
  /** Relative to the project root (`AGENTS.md`, `pkg/AGENTS.md`). */
  path: string;
  /** The file's text, or a bracketed note saying why it was not read. */
  text: string;
}

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

function homeForms(bridleHome: string | undefined): string[] {
  if (bridleHome === undefined) return [];
  const spelled = resolve(bridleHome);
  try {
    return [spelled, realpathSync(spelled)];
  } catch {
    return [spelled];
  }
}

const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MiB`;

/** The first `AGENTS_MAX_BYTES` of the file, cut on a character boundary. */
function readHead(fd: number, size: number): string {
  const buf = Buffer.alloc(Math.min(size, AGENTS_MAX_BYTES) + 1);
  let got = 0;
  for (let n; got < buf.length && (n = readSync(fd, buf, got, buf.length - got, got)) > 0; ) got += n;
  if (got <= AGENTS_MAX_BYTES) return buf.toString('utf8', 0, got);
  let end = AGENTS_MAX_BYTES;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return `${buf.toString('utf8', 0, end)}\n[… AGENTS.md is ${mib(size)}; only its first ${AGENTS_MAX_BYTES / 1024} KiB were read …]`;
}

/** The text of one AGENTS.md, a note when it is there but may not be read, undefined when there is none. */
function readConfined(file: string, root: string, homes: readonly string[], shown: string): string | undefined {
  if (process.platform !== 'linux') return existsSync(file) ? `[not read: ${shown}: bridle reads files through /proc/self/fd, which ${process.platform} lacks]` : undefined;
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
    if (!isInside(root, real)) return `[not read: ${shown} leads outside the project (to ${real})]`;
    if (homes.some((home) => isInside(home, real))) return `[not read: ${shown} leads into bridle's own home (${real})]`;
    if (!stats.isFile()) return `[not read: ${shown} is not a regular file]`;
    if (stats.nlink > 1) return `[not read: ${shown} has ${stats.nlink} hard links; the other names may lie outside the project]`;
    let fd: number;
    try {
      fd = openSync(`/proc/self/fd/${pinned}`, constants.O_RDONLY | constants.O_NOCTTY);
    } catch {
      return undefined;
    }
    try {
      return readHead(fd, stats.size);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(pinned);
  }
}

/** Contract: never throws and never blocks on a FIFO; files that may not or cannot be read are skipped or noted. */
export function readAgentsFiles(cwd: string, root = projectRoot(cwd), bridleHome?: string): AgentsFile[] {
  const rel = relative(root, cwd);
  const dirs = [root];
  if (rel && !rel.startsWith('..')) for (const part of rel.split(sep)) dirs.push(join(dirs[dirs.length - 1]!, part));
  const homes = homeForms(bridleHome);
  const out: AgentsFile[] = [];
  for (const dir of dirs) {
    const file = join(dir, 'AGENTS.md');
    const path = relative(root, file) || 'AGENTS.md';
    const text = readConfined(file, root, homes, path);
    if (text !== undefined) out.push({ path, text });
  }
  return out;
}
