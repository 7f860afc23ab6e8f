/**
 * The schema of `$BRIDLE_HOME/config.yaml`: the settings a flag can also
 * give, and `profiles`, named sets of the same settings. Strict: an unknown
 * key is an error, so a typo never silently falls back to a default.
 */
import { z } from 'zod';
import { checkRule } from '../../safety/approval-rules.js';
import { SANDBOX_MODES, type SandboxMode } from '../../safety/sandbox.js';

/** What each key must be, in words; the error line and the docs both say it this way. */
export const RULES = {
  model: 'must be a model id, or scripted:<file>',
  baseUrl: 'must be a URL, e.g. http://127.0.0.1:8080/v1',
  approval: 'must be never, ask or auto',
  allow: "must be a list of tool:pattern rules, e.g. 'bash:^npm test$'",
  sandbox: 'must be bwrap or off',
  sandboxMode: `must be ${SANDBOX_MODES.join(', ')}`,
  allowNetwork: 'must be true or false',
  allowGitWrites: 'must be true or false',
  sandboxLimits: 'must map processes (at least 16), memoryMb (at least 64) and tmpMb (at least 1) to whole numbers',
  maxSteps: 'must be a positive whole number',
  contextWindow: 'must be a whole number of tokens, at least 1024',
  contextWindows: 'must map model ids to whole numbers of tokens, each at least 1024',
  streamIdleMs: 'must be a whole number of milliseconds, at least 1',
  streamTotalMs: 'must be a whole number of milliseconds, at least 1',
  profiles: 'must map profile names to sets of these same settings',
} as const;

export type SettingKey = Exclude<keyof typeof RULES, 'profiles'>;

/** In the order `config --dump` prints them. */
export const SETTING_KEYS: readonly SettingKey[] = ['model', 'baseUrl', 'approval', 'allow', 'sandbox', 'sandboxMode', 'allowNetwork', 'allowGitWrites', 'sandboxLimits', 'maxSteps', 'contextWindow', 'contextWindows', 'streamIdleMs', 'streamTotalMs'];

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
  baseUrl: z.string().refine(isUrl),
  approval: z.enum(['never', 'ask', 'auto']),
  allow: z.array(allowRule),
  sandbox: z.enum(['bwrap', 'off']),
  sandboxMode: z.enum(SANDBOX_MODES as [SandboxMode, ...SandboxMode[]]),
  allowNetwork: z.boolean(),
  allowGitWrites: z.boolean(),
  sandboxLimits: z.strictObject({ processes: z.int().min(16), memoryMb: z.int().min(64), tmpMb: z.int().min(1) }).partial(),
  maxSteps: z.int().positive(),
  contextWindow: tokens,
  contextWindows: z.record(z.string().min(1), tokens),
  streamIdleMs: z.int().positive(),
  streamTotalMs: z.int().positive(),
};

export const Settings = z.strictObject(settingsShape).partial();
export type Settings = z.infer<typeof Settings>;

export const ConfigFile = z
  .strictObject({ ...settingsShape, profiles: z.record(z.string().min(1), Settings) })
  .partial();
export type ConfigFile = z.infer<typeof ConfigFile>;
