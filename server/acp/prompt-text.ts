/**
 * A `session/prompt`'s content blocks as the one text a bridle turn takes.
 * bridle advertises text and embedded context (`embeddedContext`), not
 * images or audio; a block it cannot carry is refused by name rather than
 * dropped, so the model never answers a prompt it did not see whole.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';

export class PromptContentError extends Error {
  override name = 'PromptContentError';
}

/** Contract: pure; throws `PromptContentError` for an image, audio or binary resource, or a prompt with no text at all. */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        parts.push(b.text);
        break;
      case 'resource_link':
        parts.push(`[@${b.name}](${b.uri})`);
        break;
      case 'resource':
        if (!('text' in b.resource)) throw new PromptContentError(`the prompt embeds a binary resource (${b.resource.uri}); bridle takes text only`);
        parts.push(`<context uri="${b.resource.uri}">\n${b.resource.text}\n</context>`);
        break;
      default:
        throw new PromptContentError(`the prompt holds ${b.type === 'image' ? 'an image' : 'audio'}; bridle takes text and embedded text resources only (promptCapabilities)`);
    }
  }
  const text = parts.join('\n');
  if (text.trim() === '') throw new PromptContentError('the prompt is empty');
  return text;
}
