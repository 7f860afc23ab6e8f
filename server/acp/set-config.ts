/**
 * `session/set_config_option` (ADR 0063): a value the client sets is settled
 * against what the session may be set to (`config-options.ts`), and the
 * session opened again with it, between prompts.
 */
import { RequestError, type SessionConfigOption, type SetSessionConfigOptionRequest, type SetSessionConfigOptionResponse } from '@agentclientprotocol/sdk';
import type { BridleSession } from '../../runtime/bridle-session.js';
import { ConfigOptionError, configOptions, settleConfig, type AcpConfig, type AcpConfigChoices } from './config-options.js';
import type { AcpHostedSession } from './hosted.js';
import { acpRefusal, INVALID_PARAMS } from './refusal.js';
import type { AcpSessions } from './sessions.js';

/** What a session may be set to and runs with now. */
export type AcpConfigOf = (session: BridleSession, set: AcpConfig) => AcpConfigChoices;

/** The `configOptions` of a `session/new`, `session/load` or `session/resume` answer: none without a `config`. */
export function sessionOptions(config: AcpConfigOf | undefined, hosted: AcpHostedSession): { configOptions?: SessionConfigOption[] } {
  return config ? { configOptions: configOptions(config(hosted.session, hosted.config)) } : {};
}

export async function setConfigOption(sessions: AcpSessions, config: AcpConfigOf | undefined, params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
  const hosted = sessions.of(params.sessionId);
  if (!config) throw RequestError.methodNotFound('session/set_config_option');
  if (hosted.prompting || hosted.reopening) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is running in this session; options change between prompts');
  let change: AcpConfig | undefined;
  try {
    change = settleConfig(config(hosted.session, hosted.config), params.configId, (params as { value: unknown }).value);
  } catch (err) {
    if (err instanceof ConfigOptionError) throw acpRefusal(INVALID_PARAMS, err.reason, err.message);
    throw err;
  }
  if (change) {
    const done = sessions.reconfigure(hosted, { ...hosted.config, ...change });
    hosted.reopening = done.catch(() => undefined);
    try {
      await done;
    } catch (err) {
      throw err instanceof RequestError ? err : acpRefusal(INVALID_PARAMS, 'CANNOT_OPEN', `the option was not set: ${(err as Error).message}`);
    } finally {
      hosted.reopening = undefined;
    }
  }
  return { configOptions: configOptions(config(hosted.session, hosted.config)) };
}
