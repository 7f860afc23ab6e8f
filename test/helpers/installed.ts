/** What an `npm install` put in a project: its packages (every `node_modules/<name>` and `node_modules/@scope/<name>`, at any depth) and their bytes on disk. */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export function installedPackages(nodeModules: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      if (name.startsWith('@')) {
        for (const inner of readdirSync(path)) visit(join(path, inner), `${name}/${inner}`);
      } else visit(path, name);
    }
  };
  const visit = (path: string, name: string) => {
    if (!existsSync(join(path, 'package.json'))) return;
    found.push(name);
    walk(join(path, 'node_modules'));
  };
  walk(nodeModules);
  return found.sort();
}

export function bytesOnDisk(path: string): number {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.blocks * 512;
  let total = st.blocks * 512;
  for (const name of readdirSync(path)) total += bytesOnDisk(join(path, name));
  return total;
}
