/**
 * A tool's parameters: a zod schema, or a plain JSON Schema object (what MCP
 * servers and plugins written in plain JavaScript give). The wire form of
 * either is JSON Schema (I7); a JSON Schema is checked through zod's
 * `fromJSONSchema`, built once per schema, so both reject bad arguments
 * before anything runs (I4) — less the `pattern`s whose test is not
 * provably linear, which a backtracking engine on the main thread cannot be
 * trusted with (`linear-pattern.ts`, ADR 0039).
 */
import { z } from 'zod';
import type { ToolParameters } from '../ports/tools.js';
import { checkableSchema } from './linear-pattern.js';

const isZod = (p: ToolParameters): p is z.ZodType => typeof (p as z.ZodType).safeParse === 'function';

const converted = new WeakMap<object, z.ZodType>();

/** Contract: the zod schema that checks arguments against `p`; for a JSON Schema, one built once and kept, its non-linear patterns left out. Throws for a JSON Schema zod cannot read. */
export function checkerOf(p: ToolParameters): z.ZodType {
  if (isZod(p)) return p;
  let c = converted.get(p);
  if (!c) converted.set(p, (c = z.fromJSONSchema(checkableSchema(p) as Parameters<typeof z.fromJSONSchema>[0])));
  return c;
}

/** Contract: pure; the JSON Schema the model is shown, without a `$schema` key. */
export function wireSchema(p: ToolParameters): Record<string, unknown> {
  const schema = isZod(p) ? (z.toJSONSchema(p, { io: 'input' }) as Record<string, unknown>) : { ...(p as Record<string, unknown>) };
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}
