/**
 * `bridle trace <session>`: a stored session — JSONL or Postgres, with its
 * whole subagent tree — as an OpenTelemetry trace (docs/design.md §12):
 * OTLP/JSON on stdout (`--json`), sent to an OTLP/HTTP endpoint (`--otlp
 * <url>`), or, with neither, one line a span as an indented tree. The spans
 * are `traceOf` of the log, so exporting a log again gives the same bytes.
 * Message content is left out unless the conventions' opt-in variable,
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, is `true`.
 */
import { traceOf, type TraceSpan } from '../log/trace.js';
import { contentOptedIn, exportOtlp, otlpJson, traceResource } from '../adapters/tracing/otlp.js';
import { redactUrl } from '../safety/redact.js';
import type { ComposedRow } from '../plugins/rows.js';
import { SetupError } from './errors.js';
import { looksLikePath } from '../runtime/stores.js';
import { readSessionTree } from './session-tree.js';
import { composeStoreRows } from './settings.js';
import { visible } from './visible.js';

export interface TraceFlags {
  json?: boolean;
  otlp?: string;
  store?: string;
  profile?: string;
  patch?: string;
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
  const resource = traceResource(version, process.env);
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(ref) ? [] : await composeStoreRows(flags);
  const tree = await readSessionTree(ref, rows);
  if (!tree.verifies) process.stderr.write(`bridle: warning: ${visible(ref)} does not verify; traced as far as it reads (bridle replay says why)\n`);
  const spans = traceOf(tree.entries, { content: contentOptedIn(process.env), children: (id) => tree.children.get(id) });
  if (flags.otlp) {
    const problem = await exportOtlp(spans, resource, flags.otlp);
    if (problem) throw new SetupError(`trace: the collector at ${redactUrl(flags.otlp)} did not take the spans: ${problem}`);
    process.stderr.write(`trace: ${spans.length} spans sent to ${redactUrl(flags.otlp)}\n`);
  }
  if (flags.json) out.write(`${await otlpJson(spans, resource)}\n`);
  else if (!flags.otlp) for (const l of treeLines(spans)) out.write(`${visible(l)}\n`);
  return 0;
}
