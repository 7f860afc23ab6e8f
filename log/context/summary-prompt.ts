/**
 * What a summary request asks for. It is appended, as one user message, to a
 * prefix of the messages the model last saw; the fixed structure keeps every
 * summary of a session comparable.
 */
import type { ModelMessage } from '../messages.js';

/** Every summary instruction begins with this, so a recorded request can be told apart from a step's. */
export const SUMMARY_REQUEST_MARK = '[bridle: context compaction]';

export const SUMMARY_SECTIONS = ['Request and intent', 'Key facts', 'Files touched', 'Errors and fixes', 'Current work', 'Next step'] as const;

export interface SummaryScope {
  /** Messages before the summarized ones that stay visible. */
  before: number;
  summarized: number;
  /** Messages after the summarized ones that stay visible. */
  after: number;
}

/** Contract: pure. */
export function summaryInstruction(s: SummaryScope): string {
  const where = s.before > 0 ? `messages ${s.before + 1} to ${s.before + s.summarized} above (the ${s.before} before them stay)` : `the first ${s.summarized} messages above`;
  const rest = s.after > 0 ? `; the last ${s.after} stay as they are, after your summary` : '';
  return [
    `${SUMMARY_REQUEST_MARK} The conversation is getting too long for the context window. Your summary will replace ${where}${rest}.`,
    'Do not call tools. Answer with the summary only, in exactly these sections, each a few short lines (write "none" where nothing applies):',
    '',
    '## Request and intent',
    'What the user asked for and what they are really after.',
    '## Key facts',
    'Facts, decisions and constraints established so far.',
    '## Files touched',
    'Every file read, created or changed, and what was done to it.',
    '## Errors and fixes',
    'Errors met and how they were fixed, or that they are still open.',
    '## Current work',
    'What was being worked on when this summary was written.',
    '## Next step',
    'The very next thing to do.',
  ].join('\n');
}

export const summaryMessage = (s: SummaryScope): ModelMessage => ({ role: 'user', content: summaryInstruction(s) });

export const isSummaryInstruction = (m: ModelMessage | undefined): boolean =>
  m?.role === 'user' && m.content.startsWith(SUMMARY_REQUEST_MARK);
