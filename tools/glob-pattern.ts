/**
 * Glob → RegExp for workspace-relative, `/`-separated paths. Node 20 has no
 * stable `fs.glob`, and the tool needs only the common forms:
 * `**` (any number of whole segments), `*` and `?` (within one segment),
 * `{a,b}` (alternatives, nestable), `[abc]` / `[!abc]` (one character), `\x` (literal x).
 * `*` and `**` match names starting with a dot too.
 */

const REGEXP_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

function escapeLiteral(text: string): string {
  return text.replace(REGEXP_SPECIAL, '\\$&');
}

interface Parsed {
  source: string;
  end: number;
}

/** A class like `[z-a]` is no valid RegExp; such a `[` is taken literally instead. */
function isValidRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

/** `[...]` starting at `start`, or undefined when it is not closed (then `[` is literal). */
function parseClass(glob: string, start: number): Parsed | undefined {
  let i = start + 1;
  const negate = glob[i] === '!' || glob[i] === '^';
  if (negate) i++;
  let body = '';
  for (let first = true; i < glob.length; i++, first = false) {
    const c = glob[i]!;
    if (c === ']' && !first) {
      const source = negate ? `[^/${body}]` : `[${body}]`;
      return isValidRegExp(source) ? { source, end: i + 1 } : undefined;
    }
    if (c === '/') return undefined;
    body += c === '\\' || c === ']' || c === '[' || c === '^' ? `\\${c}` : c;
  }
  return undefined;
}

function isSegmentStart(glob: string, i: number, inBrace: boolean): boolean {
  if (i === 0) return true;
  const prev = glob[i - 1];
  return prev === '/' || (inBrace && (prev === '{' || prev === ','));
}

function parse(glob: string, start: number, inBrace: boolean): Parsed {
  let source = '';
  let i = start;
  while (i < glob.length) {
    const c = glob[i]!;
    if (inBrace && (c === ',' || c === '}')) break;
    if (c === '\\' && i + 1 < glob.length) {
      source += escapeLiteral(glob[i + 1]!);
      i += 2;
    } else if (c === '*') {
      let stars = 1;
      while (glob[i + stars] === '*') stars++;
      const next = glob[i + stars];
      const endsSegment = next === undefined || next === '/' || (inBrace && (next === ',' || next === '}'));
      if (stars >= 2 && isSegmentStart(glob, i, inBrace) && endsSegment) {
        // `**/` may match no directory at all; a trailing `**` matches everything below.
        source += next === '/' ? '(?:.*/)?' : '.*';
        i += stars + (next === '/' ? 1 : 0);
      } else {
        source += '[^/]*';
        i += stars;
      }
    } else if (c === '?') {
      source += '[^/]';
      i++;
    } else if (c === '[') {
      const cls = parseClass(glob, i);
      source += cls ? cls.source : '\\[';
      i = cls ? cls.end : i + 1;
    } else if (c === '{') {
      const alternatives: string[] = [];
      let j = i + 1;
      let closed = false;
      for (;;) {
        const alt = parse(glob, j, true);
        alternatives.push(alt.source);
        if (glob[alt.end] === ',') j = alt.end + 1;
        else {
          closed = glob[alt.end] === '}';
          j = alt.end + 1;
          break;
        }
      }
      source += closed ? `(?:${alternatives.join('|')})` : '\\{';
      i = closed ? j : i + 1;
    } else {
      source += escapeLiteral(c);
      i++;
    }
  }
  return { source, end: i };
}

/** Contract: pure and total; every string is a valid glob (unbalanced `{` or `[` match literally). */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${parse(glob, 0, false).source}$`);
}
