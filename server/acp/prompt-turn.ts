/**
 * `session/prompt`: one turn of a hosted session, its end as a stop reason.
 * A turn that fails reaches the client as a `RequestError` naming bridle's
 * code; `$/cancel_request` of the prompt (its `signal`) cancels the turn as
 * `session/cancel` does.
 */
import { RequestError, type ContentBlock, type PromptResponse } from '@agentclientprotocol/sdk';
import type { AcpHostedSession } from './hosted.js';
import { promptText, PromptContentError } from './prompt-text.js';
import { acpRefusal, INVALID_PARAMS } from './refusal.js';
import { promptEnd } from './stop-reason.js';

const INTERNAL_ERROR = -32603;

export async function promptTurn(hosted: AcpHostedSession, prompt: readonly ContentBlock[], signal: AbortSignal): Promise<PromptResponse> {
  await hosted.reopening;
  if (hosted.prompting) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is already running in this session; cancel it first');
  const text = checkedPrompt(prompt);
  hosted.prompting = true;
  // `$/cancel_request` for this prompt, or the connection closing, cancels the turn as `session/cancel` does.
  const onAbort = () => void hosted.session.cancel('acp').catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const out = await hosted.session.run(text);
    // The turn's last figures reach the client before its end does.
    await hosted.usageSent();
    const end = promptEnd(out, hosted.session.recorder.entries);
    if ('stopReason' in end) return { stopReason: end.stopReason };
    const data = { reason: 'TURN_FAILED', code: end.failed.code, cause: end.failed.cause };
    if (end.failed.code === 'AUTH') throw RequestError.authRequired(data, end.failed.cause);
    throw new RequestError(INTERNAL_ERROR, `the turn failed: ${end.failed.code}${end.failed.cause ? `: ${end.failed.cause}` : ''}`, data);
  } catch (err) {
    if (err instanceof RequestError) throw err;
    const code = (err as { code?: unknown }).code;
    throw new RequestError(INTERNAL_ERROR, `the session failed: ${(err as Error).message}`, { reason: typeof code === 'string' ? code : 'SESSION_FAILED' });
  } finally {
    signal.removeEventListener('abort', onAbort);
    hosted.prompting = false;
  }
}

function checkedPrompt(prompt: readonly ContentBlock[]): string {
  try {
    return promptText(prompt);
  } catch (err) {
    if (err instanceof PromptContentError) throw acpRefusal(INVALID_PARAMS, 'BAD_PROMPT', err.message);
    throw err;
  }
}
