/**
 * The import graph of bridle's own sources, and the rules it must keep
 * (docs/design.md §1): `cli, server → replay → runtime, actors, bundles → plugins, safety,
 * tools, adapters → machines → ports → log`. A file may import from its own
 * layer or any below; never from above. Machines import no I/O. No import
 * circle anywhere.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Lower imports nothing higher. Folders of one layer may import each other (no circles). */
export const LAYERS: Record<string, number> = {
  log: 0,
  ports: 1,
  machines: 2,
  plugins: 3,
  safety: 3,
  tools: 3,
  adapters: 3,
  visualizations: 3,
  // The actors the machines invoke sit beside the session host: they read the host's shared pieces (the
  // fault-injection slot, the budget accounting, the context meter's and header's types) and the host composes
  // them, file by file without a circle (ADR 0056).
  actors: 4,
  runtime: 4,
  bundles: 4,
  replay: 5,
  server: 6,
  cli: 7,
  'index.ts': 8,
};

/**
 * The composition root (docs/design.md §1, ADR 0020, 0050): the only modules besides `index.ts` that import
 * `adapters/`. `runtime/catalogue.ts` names what a row's `use` builds, `runtime/settings.ts` turns settings
 * into rows, `runtime/stores.ts` turns a store reference into a store. Everyone else reaches a provider
 * through its port.
 */
export const COMPOSITION_ROOT: ReadonlySet<string> = new Set(['runtime/catalogue.ts', 'runtime/settings.ts', 'runtime/stores.ts', 'index.ts']);

/** The one file outside the composition root that may import a provider, and why (keep it to this one). */
export const ADAPTER_IMPORT_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['cli/trace.ts', '`bridle trace` is the OTLP exporter as a command: it posts a finished log\'s spans, a one-off export no session composes as a seam'],
]);

/** Modules a machine must never import (docs/design.md §1). */
export const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|http|https|worker_threads|dgram|tls)$|^(ws|openai|pg|@modelcontextprotocol\/.*|@agentclientprotocol\/.*)$/;

const SKIP_DIRS = new Set(['node_modules', 'dist', 'test', 'bench', 'examples', '.git', 'docs']);

export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (!SKIP_DIRS.has(name) && !name.startsWith('.')) visit(full);
      } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') && !(dir === root && name.endsWith('.config.ts'))) out.push(path.relative(root, full));
    }
  };
  visit(root);
  return out.sort();
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

export interface ImportEdge {
  from: string;
  to: string;
}

/** Specifiers as written, per file. */
export function importsOf(root: string, file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

/** A relative specifier resolved to the project file it names (`.js` → `.ts`). */
export function resolveLocal(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const joined = path.normalize(path.join(path.dirname(file), spec));
  return joined.replace(/\.js$/, '.ts');
}

export function layerOf(file: string): string | undefined {
  const head = file.split(path.sep)[0]!;
  return Object.hasOwn(LAYERS, head) ? head : undefined;
}

export interface Violation {
  file: string;
  problem: string;
}

export function checkLayering(root: string): Violation[] {
  const files = sourceFiles(root);
  const violations: Violation[] = [];
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const layer = layerOf(file);
    if (!layer) {
      violations.push({ file, problem: `lies in no layer of docs/design.md §1 (${Object.keys(LAYERS).join(', ')})` });
      continue;
    }
    const edges: string[] = [];
    for (const spec of importsOf(root, file)) {
      if (layer === 'machines' && IO_MODULES.test(spec)) violations.push({ file, problem: `a machine imports the I/O module ${spec}` });
      const target = resolveLocal(file, spec);
      if (!target) continue;
      edges.push(target);
      const to = layerOf(target);
      if (!to) {
        violations.push({ file, problem: `imports ${target}, which lies in no layer` });
        continue;
      }
      if (LAYERS[to]! > LAYERS[layer]!) violations.push({ file, problem: `imports upward: ${layer} (${LAYERS[layer]}) → ${to} (${LAYERS[to]}) via ${target}` });
      else if (to === 'adapters' && layer !== 'adapters' && !COMPOSITION_ROOT.has(file.split(path.sep).join('/')) && !ADAPTER_IMPORT_EXCEPTIONS.has(file.split(path.sep).join('/'))) violations.push({ file, problem: `imports the provider ${target}: only the composition root (${[...COMPOSITION_ROOT].join(', ')}) imports adapters/` });
    }
    graph.set(file, edges);
  }
  for (const cycle of cycles(graph)) violations.push({ file: cycle[0]!, problem: `import circle: ${cycle.join(' → ')} → ${cycle[0]}` });
  return violations;
}

/** Strongly connected components with more than one file (Tarjan), each as a list of files. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** Folders no own `.ts` file lives in: installed and built code. */
const NOT_SOURCE = new Set(['node_modules', 'dist', '.git']);

/** Every `.ts` file of the tree, tests, bench and examples too (not `.d.ts`), relative to `root`. */
export function allTsFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (!NOT_SOURCE.has(name)) visit(full);
      } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  visit(root);
  return out.sort();
}

/** The one module that may re-export: the library's public surface. */
export const PUBLIC_SURFACE = 'index.ts';

const EXPORT_FROM = /(?:^|\n)[ \t]*(export\s+(?:type\s+)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})\s*from\s*['"][^'"]+['"])/g;
const LOCAL_EXPORT = /(?:^|\n)[ \t]*export\s+(?:type\s+)?\{([^}]*)\}[ \t]*(?:;|(?=\r?\n|$))/g;
const IMPORT_CLAUSE = /(?:^|\n)[ \t]*import\s+(?:type\s+)?([^'";]*?)\s+from\s*['"]/g;

/** The local names an `import … from` clause binds (`a`, `{ b, c as d }`, `* as e`). */
function importedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(IMPORT_CLAUSE)) {
    const clause = m[1]!;
    const braces = /\{([^}]*)\}/.exec(clause);
    for (const part of braces ? braces[1]!.split(',') : []) {
      const local = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()?.trim();
      if (local) names.add(local);
    }
    const rest = clause.replace(/\{[^}]*\}/, '').replace(/\*\s+as\s+/, '');
    for (const n of rest.split(',').map((s) => s.trim())) if (/^[\w$]+$/.test(n)) names.add(n);
  }
  return names;
}

/**
 * Pass-through re-exports (issue 24 item 5): a module exports what it defines; an importer names the module
 * that defines the name. `export * from`, `export { … } from`, and `export { x }` of an imported `x` are
 * allowed only in `index.ts`, the public surface.
 */
export function passThroughExports(root: string): Violation[] {
  const out: Violation[] = [];
  for (const file of allTsFiles(root)) {
    if (file === PUBLIC_SURFACE) continue;
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(EXPORT_FROM)) out.push({ file, problem: `re-exports: ${m[1]!.replace(/\s+/g, ' ')}` });
    const imported = importedNames(text);
    for (const m of text.matchAll(LOCAL_EXPORT)) {
      const passed = m[1]!
        .split(',')
        .map((p) => p.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim())
        .filter((n) => n && imported.has(n));
      if (passed.length) out.push({ file, problem: `re-exports what it imports: ${passed.join(', ')}` });
    }
  }
  return out;
}
