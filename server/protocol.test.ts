import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ErrorReason, METHODS, NotificationParams } from './protocol.js';

const doc = readFileSync(new URL('../docs/protocol.md', import.meta.url), 'utf8');
/** The first cell of every table row of a section: `| \`name\` | …`. */
function firstCells(heading: string): string[] {
  const start = doc.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^\| `?([^`|]+?)`? \|/gm)].map((m) => m[1]!.trim()).filter((c) => c !== 'method' && c !== 'code' && !/^-+$/.test(c));
}

describe('docs/protocol.md and the code agree', () => {
  it('on the methods', () => {
    expect(firstCells('Methods').sort()).toEqual([...METHODS].sort());
  });

  it('on the notifications', () => {
    expect(firstCells('Notifications (server → client)').sort()).toEqual(Object.keys(NotificationParams).sort());
  });

  it('on the error codes, and on every data.reason', () => {
    expect(firstCells('Envelope').map(Number).sort()).toEqual(Object.values(ErrorCode).sort());
    for (const reason of ErrorReason.options) expect(doc, reason).toContain(`\`${reason}\``);
  });
});
