/**
 * A benchmark's session, composed like any other: the base rows with the
 * bench's scripted model, its no-op tool and a counting clock in the place of
 * theirs, the log in memory (or a JSONL file in `dir`), approval `auto`.
 */
import type { Entry } from '../log/entries.js';
import type { Plugin } from '../plugins/host.js';
import type { PatchEntry } from '../plugins/rows.js';
import { createScriptedProviderFromFunction, type ResponseFunction } from '../adapters/model/scripted.js';
import { createSession } from '../runtime/session.js';
import type { Services, SessionOptions } from '../runtime/session-options.js';
import type { ModelProvider } from '../ports/model.js';
import { noopTool } from './noop-tool.js';

export interface BenchSession {
  id: string;
  respond: ResponseFunction;
  maxSteps?: number;
  /** A JSONL store writing here; default: memory. */
  dir?: string;
  store?: Services['store'];
  repeatCall?: boolean;
  existing?: readonly Entry[];
  /** Plugins mounted after the rows (the live-traces bench's). */
  plugins?: readonly Plugin[];
  /** The tools; default: the no-op tool alone. */
  tools?: Services['tools'];
  /** Puts the scripted model behind something (a provider's wire); default: the scripted model itself. */
  wrap?: (model: ModelProvider) => ModelProvider;
  /** An xstate inspector of the session's actors (the microstep count's). */
  inspect?: SessionOptions['inspect'];
}

export function benchSession(o: BenchSession) {
  let t = 0;
  const patch: PatchEntry[] = [o.dir ? { id: 'store', use: 'jsonl', config: { dir: o.dir } } : { id: 'store', use: 'memory' }];
  if (o.repeatCall === false) patch.push({ id: 'guard:repeat-call', remove: true });
  return createSession({
    id: o.id,
    cwd: '/nonexistent',
    bridleHome: '/nonexistent-home',
    settings: { approval: 'auto', sandbox: 'off', ...(o.maxSteps !== undefined ? { maxSteps: o.maxSteps } : {}) },
    patch,
    services: {
      model: { ...(o.wrap ?? ((m: ModelProvider) => m))(createScriptedProviderFromFunction(o.respond, { deltas: 1 })), name: 'scripted-bench' },
      clock: () => t++,
      tools: o.tools ?? [noopTool],
      ...(o.store ? { store: o.store } : {}),
    },
    ...(o.existing ? { existing: o.existing } : {}),
    ...(o.plugins ? { plugins: o.plugins } : {}),
    ...(o.inspect ? { inspect: o.inspect } : {}),
  }).start();
}
