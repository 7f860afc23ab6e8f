/**
 * The documents a newcomer meets are a door that opens: every relative link
 * in the README and in docs/ names a file of the repository (and a heading of
 * it, when it names one), and every `docs/design.md §N` the code cites is a
 * section of that page.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const docs = (dir: string): string[] =>
  readdirSync(join(root, dir)).flatMap((f) => {
    const p = join(dir, f);
    return statSync(join(root, p)).isDirectory() ? docs(p) : p.endsWith('.md') ? [p] : [];
  });
const pages = ['README.md', ...docs('docs')];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
const anchorOf = (heading: string) =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
const anchorsOf = (text: string) => new Set([...text.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!)));

/** The links of a page outside code: `[text](target)`, targets that are not URLs. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
}

describe('the docs are a door that opens', () => {
  it.each(pages)('every relative link of %s resolves', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    for (const link of linksOf(text)) {
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file === '' ? join(root, page) : join(root, dirname(page), file);
      expect(existsSync(target), `${page}: ${link} names no file`).toBe(true);
      if (anchor && target.endsWith('.md')) expect(anchorsOf(readFileSync(target, 'utf8')), `${page}: ${link} names no heading`).toContain(anchor);
    }
  });

  it('the README reads in five minutes (at most 16 KB) and names every page of docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(16_000);
    const linked = new Set(linksOf(readme).map((l) => l.split('#')[0]));
    const topics = docs('docs').filter((p) => !p.startsWith(join('docs', 'adr')));
    for (const p of topics) expect(linked.has(p) || p === join('docs', 'adr', 'README.md'), `README.md does not link ${p}`).toBe(true);
  });

  it('every docs/design.md § the code cites is a section of docs/design.md', () => {
    const sections = new Set([...readFileSync(join(root, 'docs/design.md'), 'utf8').matchAll(/^## (\d+)\. /gm)].map((m) => m[1]!));
    const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
    let cited = 0;
    for (const f of files) {
      const text = readFileSync(join(root, f), 'utf8');
      for (const m of text.matchAll(/docs\/design\.md ((?:§\d+(?:, )?)+)/g)) {
        for (const [, n] of m[1]!.matchAll(/§(\d+)/g)) {
          cited++;
          expect(sections.has(n!), `${relative(root, join(root, f))} cites docs/design.md §${n}, which does not exist`).toBe(true);
        }
      }
    }
    expect(cited).toBeGreaterThan(10);
  });
});
