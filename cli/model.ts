/** Picks the model provider a `--model` names: `scripted:<file>` or an OpenAI-compatible model id. */
import { resolve } from 'node:path';
import type { ModelProvider } from '../ports/model.js';
import { createOpenAIProvider, DEFAULT_BASE_URL, isLoopback } from '../adapters/model/openai.js';
import { createScriptedProvider, loadScript } from '../adapters/model/scripted.js';
import { SetupError, UsageError } from './errors.js';

export interface ModelChoice {
  provider: ModelProvider;
  /** The name logged in session/start and request headers. */
  name: string;
  /** Set for scripted models: shown wherever their output appears. */
  scriptedLabel?: string;
}

export function chooseModel(opts: { model?: string; baseUrl?: string; streamIdleMs?: number; streamTotalMs?: number }, env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const model = opts.model ?? env.BRIDLE_MODEL;
  if (!model) throw new UsageError('no model: pass --model <id> (an OpenAI-compatible model) or --model scripted:<file>');
  if (model.startsWith('scripted:')) {
    const file = resolve(model.slice('scripted:'.length));
    let script;
    try {
      script = loadScript(file);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const provider = createScriptedProvider(script);
    return { provider, name: model, scriptedLabel: script.label };
  }
  const baseURL = opts.baseUrl ?? env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL;
  try {
    new URL(baseURL);
  } catch {
    throw new UsageError(`--base-url: not a URL: ${baseURL}`);
  }
  const apiKey = env.OPENAI_API_KEY;
  if (!apiKey && !isLoopback(baseURL)) {
    throw new SetupError(`OPENAI_API_KEY is not set: export it, or point --base-url at a local OpenAI-compatible server (${baseURL} needs a key)`);
  }
  return { provider: createOpenAIProvider({ model, baseURL, apiKey, streamIdleMs: opts.streamIdleMs, streamTotalMs: opts.streamTotalMs }), name: model };
}
