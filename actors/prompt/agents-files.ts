/**
 * AGENTS.md files: project instructions for agents, read from the project
 * root (the nearest ancestor holding `.git`, else the working directory) down
 * to the working directory, outermost first, so nearer files can refine
 * farther ones.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

export interface AgentsFile {
  /** Relative to the project root (`AGENTS.md`, `pkg/AGENTS.md`). */
  path: string;
  text: string;
}

export function projectRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

/** Contract: never throws; unreadable files are skipped. */
export function readAgentsFiles(cwd: string, root = projectRoot(cwd)): AgentsFile[] {
  const rel = relative(root, cwd);
  const dirs = [root];
  if (rel && !rel.startsWith('..')) for (const part of rel.split(sep)) dirs.push(join(dirs[dirs.length - 1]!, part));
  const out: AgentsFile[] = [];
  for (const dir of dirs) {
    const file = join(dir, 'AGENTS.md');
    try {
      if (!statSync(file).isFile()) continue;
      out.push({ path: relative(root, file) || 'AGENTS.md', text: readFileSync(file, 'utf8') });
    } catch {
      // absent or unreadable: nothing to add
    }
  }
  return out;
}
