/**
 * The viewer's static files: `/` (index.html), `/<name>.js|css` from the
 * viewer folder and `/diagrams/<machine>.svg`. No session data is served over
 * HTTP; the page gets everything over the authenticated WebSocket.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

export interface ViewerFiles {
  /** The folder holding index.html, viewer.js, viewer.css. */
  dir: string;
  /** The folder holding `<machine>.svg`. */
  diagrams: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Only plain names: nothing that could climb out of the folders. */
function locate(pathname: string, files: ViewerFiles): { file: string; type: string } | undefined {
  if (pathname === '/' || pathname === '/index.html') return { file: join(files.dir, 'index.html'), type: TYPES.html! };
  let m = /^\/([a-z0-9-]+)\.(js|css)$/.exec(pathname);
  if (m) return { file: join(files.dir, `${m[1]}.${m[2]}`), type: TYPES[m[2]!]! };
  m = /^\/diagrams\/([a-z0-9-]+)\.svg$/.exec(pathname);
  if (m) return { file: join(files.diagrams, `${m[1]}.svg`), type: TYPES.svg! };
  return undefined;
}

const SECURITY_HEADERS = {
  // The token rides in the page URL: never send it anywhere in a Referer.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
};

/** Contract: answers every request (200, 404 or 405); never throws. */
export async function serveStatic(req: IncomingMessage, res: ServerResponse, files: ViewerFiles | undefined): Promise<void> {
  const end = (status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
    res.end(body);
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') return end(405, 'method not allowed\n');
  let pathname: string;
  try {
    pathname = new URL(req.url ?? '/', 'http://x').pathname;
  } catch {
    return end(400, 'bad request\n');
  }
  const found = files && locate(pathname, files);
  if (!found) return end(404, 'not found\n');
  try {
    const body = await readFile(found.file);
    res.writeHead(200, { 'content-type': found.type, 'content-length': body.length, ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch {
    end(404, 'not found\n');
  }
}
