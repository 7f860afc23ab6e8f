/**
 * A chart as Graphviz DOT, for the SVGs. Compound states are clusters entered
 * and left through their initial dot (`compound=true`, `lhead`/`ltail`). Every
 * state's SVG group gets the id `state:<state id>`, so the viewer can light up
 * the active states.
 */
import { allStates, type Chart, type ChartState } from './statechart.js';
import { wrap } from './wrap.js';

const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function label(s: ChartState): string {
  const parts = [`<b>${html(s.key)}</b>`];
  if (s.runs.length) parts.push(`<font point-size="9" color="#2f6f4f">run ${html(s.runs.join(', '))}</font>`);
  if (s.invokes.length) parts.push(`<font point-size="9" color="#2f6f4f">invoke ${html(s.invokes.join(', '))}</font>`);
  if (s.description) parts.push(...wrap(s.description, 34).map((l) => `<font point-size="9" color="#555555"><i>${html(l)}</i></font>`));
  return `<${parts.join('<br/>')}>`;
}

const anchor = (id: string) => `${id}.__initial`;

/** Contract: pure and deterministic. */
export function toDot(chart: Chart): string {
  const byId = new Map(allStates(chart).map((s) => [s.id, s]));
  const compound = (id: string) => (byId.get(id)?.children.length ?? 0) > 0;
  const within = (inner: string, outer: string) => inner.startsWith(`${outer}.`);
  const out: string[] = [
    `digraph ${q(chart.id)} {`,
    `  graph [compound=true, rankdir=TB, fontname="Helvetica", fontsize=13, nodesep=0.35, ranksep=0.45, labelloc=t, label=<<b>${html(chart.id)}</b>>, id=${q(`machine:${chart.id}`)}];`,
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#5b6b7f", fontname="Helvetica", fontsize=11, margin="0.12,0.06"];',
    '  edge [fontname="Helvetica", fontsize=9, color="#7a8899", fontcolor="#34495e", arrowsize=0.7];',
  ];
  const initialDot = (owner: ChartState, indent: string) => {
    if (!owner.initial) return;
    out.push(`${indent}${q(anchor(owner.id))} [shape=point, width=0.1, color="#34495e", fillcolor="#34495e", label="", id=${q(`initial:${owner.id}`)}];`);
    out.push(`${indent}${q(anchor(owner.id))} -> ${q(owner.initial)} [arrowsize=0.6];`);
  };
  const states = (parent: ChartState, indent: string) => {
    for (const s of parent.children) {
      if (s.children.length > 0) {
        out.push(`${indent}subgraph ${q(`cluster_${s.id}`)} {`);
        out.push(`${indent}  id=${q(`state:${s.id}`)}; class="state"; label=${label(s)}; style="rounded,filled"; fillcolor="#f3f6fa"; color="#5b6b7f"; fontname="Helvetica"; fontsize=11;`);
        initialDot(s, `${indent}  `);
        states(s, `${indent}  `);
        out.push(`${indent}}`);
      } else {
        const extra = s.type === 'final' ? ', peripheries=2' : '';
        out.push(`${indent}${q(s.id)} [id=${q(`state:${s.id}`)}, class="state", label=${label(s)}${extra}];`);
      }
    }
  };
  initialDot(chart.root, '  ');
  states(chart.root, '  ');
  // Parallel transitions (same source and target) share one arrow with one label per line.
  const merged = new Map<string, { source: string; target: string; labels: string[] }>();
  for (const e of chart.edges) {
    const k = `${e.source}\u0000${e.target}`;
    const m = merged.get(k) ?? merged.set(k, { source: e.source, target: e.target, labels: [] }).get(k)!;
    m.labels.push(e.label);
  }
  for (const e of merged.values()) {
    const attrs = [`label=< ${e.labels.map(html).join(' <br/> ')} >`];
    let tail = e.source;
    let head = e.target;
    if (compound(e.source)) {
      tail = anchor(e.source);
      if (e.source !== e.target && !within(e.target, e.source)) attrs.push(`ltail=${q(`cluster_${e.source}`)}`);
    }
    if (compound(e.target)) {
      head = anchor(e.target);
      if (e.source !== e.target && !within(e.source, e.target)) attrs.push(`lhead=${q(`cluster_${e.target}`)}`);
    }
    if (e.source === e.target) attrs.push('style=dashed');
    out.push(`  ${q(tail)} -> ${q(head)} [${attrs.join(', ')}];`);
  }
  if (chart.everywhere.length > 0) {
    out.push(`  ${q(`${chart.id}.__everywhere`)} [shape=note, style=filled, fillcolor="#fffbe6", color="#b59f3b", fontsize=9, label=<in every state:<br/>${chart.everywhere.map(html).join('<br/>')}>];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}
