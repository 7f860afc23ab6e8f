/**
 * The config of an `mcp:<name>` row: a server started as a process and
 * spoken to over stdio (`command`, `args`, `env`), or one reached over
 * streamable HTTP (`url`, `headers`). Both take the deadlines of a call and
 * of the start. The environment of a stdio server is the SDK's short list
 * of harmless variables (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus
 * exactly what `env` names: nothing else of bridle's environment, so no key
 * or token reaches a server unless the row hands it over.
 *
 * `trusted` (default false) is the user's word that the server's
 * `readOnlyHint` may be believed: a server runs outside the sandbox, so
 * without it every call of its tools is a write for approval (ADR 0039).
 */
import { z } from 'zod';

/** A call's default deadline: the bash tool's. */
export const DEFAULT_MCP_TIMEOUT_MS = 120_000;
/** How long a server may take to start, answer `initialize` and list its tools. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;

const common = {
  timeoutMs: z.int().positive().max(2 ** 31 - 1).default(DEFAULT_MCP_TIMEOUT_MS),
  startTimeoutMs: z.int().positive().max(2 ** 31 - 1).default(DEFAULT_MCP_START_TIMEOUT_MS),
  trusted: z.boolean().default(false),
};

const Stdio = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string().min(1), z.string()).optional(),
  ...common,
});

const Http = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// URL' }),
  headers: z.record(z.string().min(1), z.string()).optional(),
  ...common,
});

export type McpStdioConfig = z.infer<typeof Stdio>;
export type McpHttpConfig = z.infer<typeof Http>;
export type McpConfig = McpStdioConfig | McpHttpConfig;

const has = (v: unknown, k: string) => typeof v === 'object' && v !== null && Object.hasOwn(v, k);

/** Either shape, and an error that says which keys go together rather than zod's "invalid union". */
export const McpConfig: z.ZodType<McpConfig> = z.unknown().pipe(
  z.custom<unknown>().superRefine((v, ctx) => {
    if (has(v, 'command') === has(v, 'url')) ctx.addIssue({ code: 'custom', message: 'give either command (a server started over stdio, with args and env) or url (a streamable HTTP server, with headers)' });
  }),
).pipe(z.union([Stdio, Http])) as unknown as z.ZodType<McpConfig>;

export const isStdio = (c: McpConfig): c is McpStdioConfig => 'command' in c;
