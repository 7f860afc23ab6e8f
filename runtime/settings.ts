/**
 * The settings, written once: the schema of `$BRIDLE_HOME/config.yaml` (the
 * settings a flag can also give, a `patch:` of rows, and `profiles`: an
 * ordered list of bundles, a patch, and settings), the same schema the flags
 * are checked with, and the sugar that turns settings into row changes.
 * Strict: an unknown key is an error, so a typo never silently falls back to
 * a default.
 */
import { z } from 'zod';
import { Patch, type ComposedRow } from '../plugins/rows.js';
import { checkRule } from '../safety/approval-rules.js';
import { SANDBOX_MODES, type SandboxMode } from '../ports/sandbox.js';
import { isPostgresUrl } from '../adapters/store/postgres-pool.js';
import { OPENAI_USES } from '../adapters/model/openai.js';
import { isLoopback } from '../adapters/model/wire-provider.js';

/** The rows that reach a model over a wire and take a model id, a base URL and stream limits; the OpenAI ones share every key. */
const WIRE_USES: readonly string[] = [...OPENAI_USES, 'anthropic'];
/** What a row's config keeps when the provider changes to another family's: the keys every wire has. */
const SHARED_WIRE_KEYS = ['model', 'maxOutputTokens', 'streamIdleMs', 'streamTotalMs'];
import { REASONING_EFFORTS } from '../adapters/model/openai-responses-wire.js';

/** What each key must be, in words; the error line and the docs both say it this way. */
export const RULES = {
  model: 'must be a model id, or scripted:<file>',
  provider: 'must be openai-chat, openai-responses, anthropic or openai (the same as openai-chat)',
  maxOutputTokens: 'must be a positive whole number of tokens',
  reasoningEffort: `must be ${REASONING_EFFORTS.join(', ')}`,
  thinkingBudget: 'must be a whole number of tokens, at least 1024',
  baseUrl: 'must be a URL, e.g. http://127.0.0.1:8080/v1',
  approval: 'must be never, ask or auto',
  allow: "must be a list of tool:pattern rules, e.g. 'bash:^npm test$'",
  sandbox: 'must be bwrap or off',
  sandboxMode: `must be ${SANDBOX_MODES.join(', ')}`,
  allowNetwork: 'must be true or false',
  allowGitWrites: 'must be true or false',
  sandboxLimits: 'must map processes (at least 16), memoryMb (at least 64) and tmpMb (at least 1) to whole numbers',
  maxSteps: 'must be a positive whole number',
  budget: 'must be tokens=N,usd=X (either part may be left out, each above 0)',
  contextWindow: 'must be a whole number of tokens, at least 1024',
  contextWindows: 'must map model ids to whole numbers of tokens, each at least 1024',
  streamIdleMs: 'must be a whole number of milliseconds, at least 1',
  streamTotalMs: 'must be a whole number of milliseconds, at least 1',
  maxDepth: 'must be a whole number from 0 to 8',
  treeBudget: 'must be steps=N,tokens=M (either part may be left out, each at least 1)',
  store: 'must be a postgres:// URL, or the directory of the JSONL logs (absolute in a config file)',
  leaseMs: 'must be a whole number of milliseconds from 100 to 3600000',
  patch: 'must be a list of rows: { id, use, config } replaces a row, { insert: true, id, use, … } adds one, { id, remove: true } removes one',
  bundles: 'must be a list of bundle names (built in: base; or yours, in $BRIDLE_HOME/bundles/<name>/bundle.yaml)',
  profiles: 'must map profile names to { bundles, patch } and these same settings',
} as const;

export type SettingKey = Exclude<keyof typeof RULES, 'profiles' | 'patch' | 'bundles' | 'maxDepth' | 'treeBudget'>;

/** In the order `config --dump` prints them. */
export const SETTING_KEYS: readonly SettingKey[] = ['model', 'provider', 'maxOutputTokens', 'reasoningEffort', 'thinkingBudget', 'baseUrl', 'approval', 'allow', 'sandbox', 'sandboxMode', 'allowNetwork', 'allowGitWrites', 'sandboxLimits', 'maxSteps', 'budget', 'contextWindow', 'contextWindows', 'streamIdleMs', 'streamTotalMs', 'store', 'leaseMs'];

const isUrl = (s: string) => {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
};

/** `tool:pattern`, with a pattern that compiles; the same rule `--allow` takes. `worded`: the message is already a full sentence. */
const allowRule = z.string().superRefine((text, ctx) => {
  const i = text.indexOf(':');
  if (i <= 0) return void ctx.addIssue({ code: 'custom', message: `${RULES.allow} (got ${JSON.stringify(text)})`, params: { worded: true } });
  try {
    checkRule({ tool: text.slice(0, i), pattern: text.slice(i + 1) });
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message, params: { worded: true } });
  }
});

const tokens = z.int().min(1024);

export const settingsShape = {
  model: z.string().min(1),
  /** The `model` row's `use`: which wire the model is reached through (ADR 0044). */
  provider: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'openai']),
  maxOutputTokens: z.int().positive(),
  reasoningEffort: z.enum(REASONING_EFFORTS),
  /** Anthropic's extended thinking: `budget_tokens` of each request (ADR 0046). */
  thinkingBudget: z.int().min(1024),
  baseUrl: z.string().refine(isUrl),
  approval: z.enum(['never', 'ask', 'auto']),
  allow: z.array(allowRule),
  sandbox: z.enum(['bwrap', 'off']),
  sandboxMode: z.enum(SANDBOX_MODES as [SandboxMode, ...SandboxMode[]]),
  allowNetwork: z.boolean(),
  allowGitWrites: z.boolean(),
  sandboxLimits: z.strictObject({ processes: z.int().min(16), memoryMb: z.int().min(64), tmpMb: z.int().min(1) }).partial(),
  maxSteps: z.int().positive(),
  /** The session's cap for itself and its subagent tree (ADR 0047): tokens and/or US dollars. */
  budget: z.strictObject({ tokens: z.int().positive().optional(), usd: z.number().positive().optional() }).refine((b) => b.tokens !== undefined || b.usd !== undefined),
  contextWindow: tokens,
  contextWindows: z.record(z.string().min(1), tokens),
  streamIdleMs: z.int().positive(),
  streamTotalMs: z.int().positive(),
  store: z.string().min(1),
  leaseMs: z.int().min(100).max(3_600_000),
};

export const Settings = z.strictObject(settingsShape).partial();
export type Settings = z.infer<typeof Settings>;

/** A profile: the bundles it stacks, in order (default `[base]`; a later one replaces an earlier one's rows by id), its own patch, and settings. */
export const Profile = z.strictObject({ ...settingsShape, bundles: z.array(z.string().min(1)).min(1), patch: Patch }).partial();
export type Profile = z.infer<typeof Profile>;

export const ConfigFile = z
  .strictObject({ ...settingsShape, patch: Patch, profiles: z.record(z.string().min(1), Profile) })
  .partial();
export type ConfigFile = z.infer<typeof ConfigFile>;

/** A flag-only setting: how deep subagents may go. */
export const maxDepthSetting = z.int().min(0).max(8);
/** A flag-only setting: the steps and tokens the whole tree of subagents may use. */
export const treeBudgetSetting = z.strictObject({ steps: z.int().positive().optional(), tokens: z.int().positive().optional() }).refine((b) => b.steps !== undefined || b.tokens !== undefined);

/** A layer of settings and the name provenance gives it (`home`, `profile ci`, `env`, `flag`, `options`). */
export interface SettingsLayer {
  from: string;
  settings: Settings & { maxDepth?: number; treeBudget?: { steps?: number; tokens?: number } };
}

type Config = Record<string, unknown>;
const configOf = (row: ComposedRow | undefined): Config => (row?.config && typeof row.config === 'object' ? { ...(row.config as Config) } : {});
const defined = (o: Config): Config => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * The settings keys as sugar over rows: each set key changes the fields of
 * the row it concerns (`model` → the `model` row, `approval`/`allow` → the
 * `approval` row, the sandbox keys → `sandbox` (`allowGitWrites` → `fs` too), `maxSteps` and `budget` → `turn`, the
 * windows → `compaction`, `maxDepth` and `treeBudget` → `subagents`, `store`/`leaseMs` → `store`), and the row then
 * names that layer as where it came from. Layers apply in order, later wins.
 * Contract: pure; a key whose row was removed by a patch changes nothing and
 * is reported in `warnings`.
 */
export function applySettings(rows: readonly ComposedRow[], layers: readonly SettingsLayer[]): { rows: ComposedRow[]; warnings: string[] } {
  const out = rows.map((r) => ({ ...r }));
  const warnings: string[] = [];
  const edit = (id: string, from: string, key: string, f: (row: ComposedRow) => Omit<ComposedRow, 'id' | 'from'>) => {
    const i = out.findIndex((r) => r.id === id);
    if (i < 0) return void warnings.push(`${from}: ${key} is set, but there is no ${id} row to apply it to (a patch removed it?)`);
    out[i] = { id, from, ...f(out[i]!) };
  };
  for (const { from, settings: s } of layers) {
    // The provider first, so a model named in the same layer lands on it; the OpenAI-style rows share their config's keys, so it carries over.
    if (s.provider !== undefined) {
      const use = s.provider;
      edit('model', from, 'provider', (row) => {
        if (!WIRE_USES.includes(row.use)) return { use, config: {} };
        const c = configOf(row);
        const sameFamily = OPENAI_USES.includes(row.use) && OPENAI_USES.includes(use);
        return { use, config: sameFamily || row.use === use ? c : Object.fromEntries(Object.entries(c).filter(([k]) => SHARED_WIRE_KEYS.includes(k))) };
      });
    }
    // A model id sets the row's `model` and keeps its provider: a patch or an earlier layer chose the wire (only a scripted row or one of no OpenAI wire falls back to chat completions).
    if (s.model !== undefined) {
      const m = s.model;
      edit('model', from, 'model', (row) =>
        m.startsWith('scripted:') ? { use: 'scripted', config: { file: m.slice('scripted:'.length) } } : WIRE_USES.includes(row.use) ? { use: row.use, config: { ...configOf(row), model: m } } : { use: 'openai-chat', config: { model: m } },
      );
    }
    const use = out.find((r) => r.id === 'model')?.use ?? '';
    // Each wire's own knob: reasoning effort for the Responses API, a thinking budget for Anthropic's.
    const wire = defined({ baseUrl: s.baseUrl, streamIdleMs: s.streamIdleMs, streamTotalMs: s.streamTotalMs, maxOutputTokens: s.maxOutputTokens, ...(use === 'anthropic' ? { thinkingBudget: s.thinkingBudget } : { reasoningEffort: s.reasoningEffort }) });
    if (Object.keys(wire).length > 0 && WIRE_USES.includes(use)) edit('model', from, 'baseUrl', (row) => ({ use: row.use, config: { ...configOf(row), ...wire } }));
    if (s.approval !== undefined || s.allow !== undefined) {
      edit('approval', from, 'approval', (row) => ({ use: row.use, config: { ...configOf(row), ...defined({ policy: s.approval, rules: s.allow }) } }));
    }
    if (s.sandbox !== undefined) edit('sandbox', from, 'sandbox', (row) => (s.sandbox === 'off' ? { use: 'off' } : { use: 'bwrap', config: row.use === 'bwrap' ? configOf(row) : {} }));
    const confine = defined({ mode: s.sandboxMode, network: s.allowNetwork, gitWritable: s.allowGitWrites, limits: s.sandboxLimits });
    if (Object.keys(confine).length > 0 && out.find((r) => r.id === 'sandbox')?.use === 'bwrap') edit('sandbox', from, 'sandboxMode', (row) => ({ use: row.use, config: { ...configOf(row), ...confine } }));
    if (s.allowGitWrites !== undefined && out.find((r) => r.id === 'fs')?.use === 'local') edit('fs', from, 'allowGitWrites', (row) => ({ use: row.use, config: { ...configOf(row), gitWritable: s.allowGitWrites } }));
    if (s.maxSteps !== undefined) edit('turn', from, 'maxSteps', (row) => ({ use: row.use, config: { ...configOf(row), maxSteps: s.maxSteps } }));
    if (s.budget !== undefined) edit('turn', from, 'budget', (row) => ({ use: row.use, config: { ...configOf(row), budget: s.budget } }));
    if (s.contextWindow !== undefined || s.contextWindows !== undefined) {
      // Windows per model merge, later layers' entries over earlier ones'; a set window wins over all of them.
      edit('compaction', from, 'contextWindow', (row) => {
        const c = configOf(row);
        const windows = s.contextWindows ? { ...((c.windows as Record<string, number> | undefined) ?? {}), ...s.contextWindows } : c.windows;
        return { use: row.use, config: defined({ ...c, window: s.contextWindow ?? c.window, windows }) };
      });
    }
    // Where sessions live (ADR 0025): a postgres:// URL names the Postgres store, anything else a JSONL directory.
    if (s.store !== undefined) {
      const target = s.store;
      edit('store', from, 'store', (row) => (isPostgresUrl(target) ? { use: 'postgres', config: { ...(row.use === 'postgres' ? configOf(row) : {}), url: target } } : { use: 'jsonl', config: { dir: target } }));
    }
    if (s.leaseMs !== undefined && out.find((r) => r.id === 'store')?.use === 'postgres') edit('store', from, 'leaseMs', (row) => ({ use: row.use, config: { ...configOf(row), leaseMs: s.leaseMs } }));
    if (s.maxDepth !== undefined) edit('subagents', from, 'maxDepth', (row) => ({ use: row.use, config: { ...configOf(row), maxDepth: s.maxDepth } }));
    if (s.treeBudget !== undefined) edit('subagents', from, 'treeBudget', (row) => ({ use: row.use, config: { ...configOf(row), treeBudget: s.treeBudget } }));
  }
  return { rows: out, warnings };
}

/** Whether a model row speaks an OpenAI wire (chat or Responses): its config names `model`, `baseUrl`, `apiKeyEnv`. Contract: pure. */
export const isOpenAIUse = (use: string | undefined): boolean => use !== undefined && OPENAI_USES.includes(use);

/** Whether an OpenAI-wire model row needs no key: its server is on this machine (Ollama, vLLM, llama.cpp). Contract: pure. */
export const needsNoKey = (baseUrl: string): boolean => isLoopback(baseUrl);
