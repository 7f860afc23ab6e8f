/** Text helpers shared by the file tools. */

/** How much of a file is sniffed for NUL bytes to call it binary (what git and grep do, roughly). */
export const BINARY_SNIFF_BYTES = 8192;

export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

/**
 * Prefixes each line with its 1-based number, right-aligned (`  12\t...`), so a
 * model can cite lines in later edits. All numbers share one width.
 */
export function numberLines(lines: readonly string[], firstLine: number): string {
  const width = Math.max(4, String(firstLine + lines.length - 1).length);
  return lines.map((line, i) => `${String(firstLine + i).padStart(width)}\t${line}`).join('\n');
}

/** Shortens a line for display, saying how much was dropped. */
export function clipLine(line: string, max: number): string {
  if (line.length <= max) return line;
  return `${line.slice(0, max)}… [${line.length - max} more characters]`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Number of (possibly overlapping) occurrences of `needle` in `haystack`; stops counting at `stopAt`. */
export function countOccurrences(haystack: string, needle: string, stopAt = Infinity): number {
  if (needle === '') return 0;
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1 && count < stopAt; at = haystack.indexOf(needle, at + 1)) count++;
  return count;
}

/** Code-point order, so listings do not depend on the host's locale (the fs seam's walk order). */

/** Bytes as UTF-8 text, the way Node decodes them (invalid sequences become U+FFFD, a BOM stays). */
export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
