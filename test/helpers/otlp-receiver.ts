/**
 * What the live-telemetry tests need around `bridle run`: a local OTLP/HTTP
 * receiver on a free port that keeps every POST, and the two-step scripted
 * session (one `list_dir`, then an answer, with usage) whose spans and
 * metrics they check.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OtlpPost {
  path: string;
  type: string;
  body: string;
}

export interface OtlpReceiver {
  readonly posts: OtlpPost[];
  readonly port: number;
  close(): void;
}

const bodyOf = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => resolve(b));
  });

/** Contract: resolves once it listens on 127.0.0.1 (port 0); every request is answered 200 `{}`. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const posts: OtlpPost[] = [];
  const server = createServer(async (req, res) => {
    posts.push({ path: req.url ?? '', type: String(req.headers['content-type']), body: await bodyOf(req) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { posts, port: (server.address() as { port: number }).port, close: () => void server.close() };
}

/** The scripted two steps (usage 100+10, then 130+5), written into `dir`; returns the `--model` value. */
export function twoStepScript(dir: string, label: string): string {
  const file = join(dir, 'script.json');
  writeFileSync(
    file,
    JSON.stringify({
      label,
      responses: [
        { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 100, outputTokens: 10 } },
        { text: 'Nothing here.', usage: { inputTokens: 130, outputTokens: 5 } },
      ],
    }),
  );
  return `scripted:${file}`;
}
