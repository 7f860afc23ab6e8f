/** The approval form a caller fills and the answer read back from it (ADR 0075): untrusted, so only an exact approve allows. */
import { describe, expect, it } from 'vitest';
import { answerOfResponse, approvalElicitation, approvalMessage } from './approval-form.js';

const write = { callId: 'c1', name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content: 'one\n\u001b[2Jtwo\n' }), reason: 'writes a file', presented: 'write a.txt' };

describe('the approval form', () => {
  it('shows the call, why it asks and the change; no control character reaches the caller', () => {
    expect(approvalMessage(write)).toBe('bridle asks to run: write a.txt\nwhy it asks: writes a file\n\nwrite a.txt:\n+ one\n+ \\u001b[2Jtwo');
    expect(approvalMessage({ name: 'bash', arguments: '{"command":"ls -l"}', presented: '$ ls -l', reason: '' })).toBe('bridle asks to run: $ ls -l\n\ncommand: ls -l');
    expect(approvalElicitation(write).requestedSchema).toMatchObject({ properties: { decision: { enum: ['approve', 'deny'] }, reason: { type: 'string' } }, required: ['decision'] });
  });

  it("a tool's question keeps its fields", () => {
    const form = { fields: [{ name: 'color', type: 'string' as const, required: true, options: ['red', 'blue'] }, { name: 'n', type: 'integer' as const, required: false, default: 3 }] };
    expect(approvalElicitation({ ...write, form }).requestedSchema).toEqual({ type: 'object', properties: { color: { type: 'string', enum: ['red', 'blue'] }, n: { type: 'integer', default: 3 } }, required: ['color'] });
    expect(answerOfResponse({ kind: 'elicit', action: 'accept', content: { color: 'red', n: 4, extra: {} } }, 'mcp:x', form)).toEqual({ outcome: 'allowed-once', by: 'mcp:x', values: { color: 'red', n: 4 } });
  });

  it('only an accepted approve allows; a deny, a decline, a cancel, a missing or odd answer rejects, saying which', () => {
    expect(answerOfResponse({ kind: 'elicit', action: 'accept', content: { decision: 'approve' } }, 'mcp:x')).toEqual({ outcome: 'allowed-once', by: 'mcp:x' });
    expect(answerOfResponse({ kind: 'elicit', action: 'accept', content: { decision: 'deny', reason: ' no\u0007 ' } }, 'mcp:x')).toEqual({ outcome: 'rejected', by: 'mcp:x (denied): no\\u0007' });
    expect(answerOfResponse({ kind: 'elicit', action: 'accept', content: { decision: 'APPROVE' } }, 'mcp:x').outcome).toBe('rejected');
    expect(answerOfResponse({ kind: 'elicit', action: 'decline' }, 'mcp:x')).toEqual({ outcome: 'rejected', by: 'mcp:x (declined the question)' });
    expect(answerOfResponse({ kind: 'elicit', action: 'cancel' }, 'mcp:x')).toEqual({ outcome: 'rejected', by: 'mcp:x (cancelled the question)' });
    expect(answerOfResponse({ kind: 'missing' }, 'mcp:x')).toEqual({ outcome: 'rejected', by: 'mcp:x (no answer in the retried call)' });
  });
});
