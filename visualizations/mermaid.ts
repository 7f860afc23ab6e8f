/**
 * A chart as Mermaid `stateDiagram-v2`. State keys are the Mermaid ids when
 * they are unique in the machine (they are in bridle's machines), so the
 * diagram reads like the config. Transitions between siblings of a composite
 * state are written inside it, all others at the top level, and descriptions
 * become notes.
 */
import { allStates, type Chart, type ChartState } from './statechart.js';
import { wrap } from './wrap.js';

const RESERVED = new Set(['end', 'state', 'note', 'direction', 'class', 'classDef', 'style', 'as', 'left', 'right', 'of']);

/** Mermaid reads `;` as a statement end and `#` as an entity: keep labels plain. */
const clean = (s: string) => s.replace(/;/g, ',').replace(/#/g, 'no. ').replace(/[{}]/g, '').replace(/\s+/g, ' ').trim();

function idsFor(chart: Chart): Map<string, string> {
  const states = allStates(chart);
  const keys = states.map((s) => s.key);
  const unique = new Set(keys).size === keys.length;
  const ids = new Map<string, string>();
  for (const s of states) {
    let id = unique ? s.key : s.id.split('.').slice(1).join('_');
    id = id.replace(/[^A-Za-z0-9_]/g, '_');
    if (RESERVED.has(id)) id = `${id}_`;
    ids.set(s.id, id);
  }
  return ids;
}

/** Contract: pure and deterministic. */
export function toMermaid(chart: Chart, source?: string): string {
  const ids = idsFor(chart);
  const id = (stateId: string) => ids.get(stateId) ?? '[*]';
  const parentOf = new Map<string, string>();
  for (const s of [chart.root, ...allStates(chart)]) for (const c of s.children) parentOf.set(c.id, s.id);
  const out: string[] = ['stateDiagram-v2', `  %% ${chart.id}: generated from ${source ?? 'the machine'} by \`npm run viz\`, do not edit`];

  const noteLines = (s: ChartState): string[] => [
    ...(s.description ? wrap(clean(s.description), 48) : []),
    ...(s.runs.length ? [`runs ${s.runs.join(', ')}`] : []),
    ...(s.invokes.length ? [`invokes ${s.invokes.join(', ')}`] : []),
  ];

  const block = (parent: ChartState, indent: string) => {
    for (const s of parent.children) {
      const label = s.key !== id(s.id) ? `state "${clean(s.key)}" as ${id(s.id)}` : `state ${id(s.id)}`;
      if (s.children.length > 0) {
        out.push(`${indent}${label} {`);
        block(s, `${indent}  `);
        out.push(`${indent}}`);
      } else out.push(`${indent}${label}`);
    }
    if (parent.initial) out.push(`${indent}[*] --> ${id(parent.initial)}`);
    // Transitions between two children of this state; everything else goes to the top level.
    if (parent !== chart.root)
      for (const e of chart.edges) if (parentOf.get(e.source) === parent.id && parentOf.get(e.target) === parent.id) out.push(`${indent}${id(e.source)} --> ${id(e.target)} : ${clean(e.label)}`);
    for (const s of parent.children) if (s.type === 'final') out.push(`${indent}${id(s.id)} --> [*]`);
    for (const s of parent.children) {
      const lines = noteLines(s);
      if (lines.length === 0) continue;
      out.push(`${indent}note right of ${id(s.id)}`, ...lines.map((l) => `${indent}  ${l}`), `${indent}end note`);
    }
  };
  block(chart.root, '  ');

  for (const e of chart.edges) {
    const p = parentOf.get(e.source);
    if (p !== chart.root.id && p === parentOf.get(e.target)) continue;
    out.push(`  ${id(e.source)} --> ${id(e.target)} : ${clean(e.label)}`);
  }
  if (chart.everywhere.length > 0 && chart.root.initial) {
    out.push(`  note left of ${id(chart.root.initial)}`, `    in every state: ${chart.everywhere.map(clean).join(', ')}`, '  end note');
  }
  return out.join('\n') + '\n';
}
