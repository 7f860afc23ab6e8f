/**
 * `bridle trace <session>`: a stored session — JSONL or Postgres, with its
 * whole subagent tree — as an OpenTelemetry trace (docs/design.md §12):
 * OTLP/JSON on stdout (`--json`), sent to an OTLP/HTTP endpoint (`--otlp
 * <url>`), or, with neither, one line a span as an indented tree. The spans
 * are `traceOf` of the log, so exporting a log again gives the same bytes.
 * Message content is left out unless the conventions' opt-in variable,
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, is `true`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Entry } from '../log/entries.js';
import { traceOf, type TraceSpan } from '../log/trace.js';
import { exportOtlp, otlpJson, type TraceResource } from '../adapters/tracing/otlp.js';
import { redactUrl } from '../adapters/store/postgres-pool.js';
import type { ComposedRow } from '../plugins/rows.js';
import { SetupError, UsageError } from './errors.js';
import { bridleHome } from './home.js';
import { looksLikePath, targetOf } from './session-store.js';
import { composeStoreRows } from './settings.js';
import { verifyFile, verifyLines } from './replay.js';
import { visible } from './visible.js';

export interface TraceFlags {
  json?: boolean;
  otlp?: string;
  store?: string;
  profile?: string;
  patch?: string;
}

/** The conventions' opt-in: content only when it is exactly `true` (case aside). */
export const contentOptedIn = (env: NodeJS.ProcessEnv) => (env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '').toLowerCase() === 'true';

export const traceResource = (version: string): TraceResource => ({ attributes: { 'service.name': 'bridle', 'service.version': version }, scope: { name: 'bridle', version } });

/** A session's entries and every subagent's below it, read from where the session lives. */
async function readTree(read: (id: string) => Promise<Entry[] | undefined>, entries: Entry[]): Promise<Map<string, Entry[]>> {
  const tree = new Map<string, Entry[]>();
  const todo = [...entries];
  while (todo.length > 0) {
    const e = todo.shift()!;
    if (e.kind !== 'subagent/start' || tree.has(e.child)) continue;
    const child = await read(e.child);
    if (!child) continue;
    tree.set(e.child, child);
    todo.push(...child);
  }
  return tree;
}

function treeLines(spans: readonly TraceSpan[]): string[] {
  const depth = new Map<string, number>();
  return spans.map((s) => {
    const d = s.parentSpanId ? (depth.get(s.parentSpanId) ?? 0) + 1 : 0;
    depth.set(s.spanId, d);
    const ms = Number((BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1_000_000n);
    const tokens = s.attributes['gen_ai.usage.input_tokens'] !== undefined ? ` in=${s.attributes['gen_ai.usage.input_tokens']} out=${s.attributes['gen_ai.usage.output_tokens']}` : '';
    const status = s.status.code === 'error' ? ` error=${s.attributes['error.type'] ?? 'error'}` : '';
    return `${'  '.repeat(d)}${s.name} ${ms} ms${tokens}${status}`;
  });
}

export async function traceCommand(ref: string, flags: TraceFlags, version: string, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const resource = traceResource(version);
  const home = bridleHome();
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(ref) ? [] : await composeStoreRows(flags);
  const stored = targetOf(rows, home, ref);
  let entries: Entry[];
  let read: (id: string) => Promise<Entry[] | undefined>;
  let ok: boolean;
  if (stored.kind === 'postgres') {
    const lines = await stored.store.tail(stored.id);
    if (!lines || lines.length === 0) throw new UsageError(`no session ${stored.id} at ${redactUrl(stored.store.url)}`);
    const v = verifyLines(lines);
    ({ entries } = v);
    ok = v.verdict.ok;
    read = async (id) => {
      const child = await stored.store.tail(id);
      return child && child.length > 0 ? verifyLines(child).entries : undefined;
    };
  } else {
    if (!existsSync(stored.path)) throw new UsageError(`no session log at ${stored.path}`);
    const v = verifyFile(stored.path);
    ({ entries } = v);
    ok = v.verdict.ok;
    const dir = dirname(stored.path);
    read = async (id) => {
      const file = join(dir, `${id}.jsonl`);
      return existsSync(file) ? verifyFile(file).entries : undefined;
    };
  }
  if (!ok) process.stderr.write(`bridle: warning: ${visible(ref)} does not verify; traced as far as it reads (bridle replay says why)\n`);
  const tree = await readTree(read, entries);
  const spans = traceOf(entries, { content: contentOptedIn(process.env), children: (id) => tree.get(id) });
  if (flags.otlp) {
    const problem = await exportOtlp(spans, resource, flags.otlp);
    if (problem) throw new SetupError(`trace: the collector at ${redactUrl(flags.otlp)} did not take the spans: ${problem}`);
    process.stderr.write(`trace: ${spans.length} spans sent to ${redactUrl(flags.otlp)}\n`);
  }
  if (flags.json) out.write(`${await otlpJson(spans, resource)}\n`);
  else if (!flags.otlp) for (const l of treeLines(spans)) out.write(`${visible(l)}\n`);
  return 0;
}
