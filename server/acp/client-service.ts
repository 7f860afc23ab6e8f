/**
 * The `acp-client` service over one ACP connection: the client's files and
 * terminals for one session, as `ports/acp-client.ts` shapes them. Every
 * failure (an error answer, a connection gone) becomes an `AcpClientError`.
 */
import { methods, RequestError, type AgentContext } from '@agentclientprotocol/sdk';
import { AcpClientError, type AcpClient, type AcpClientCapabilities, type AcpTerminal } from '../../ports/acp-client.js';

async function asked<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RequestError) throw new AcpClientError(`${what}: ${err.message}`, err.code);
    throw new AcpClientError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const cancelling = (signal?: AbortSignal) => (signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined);

export function acpClientService(cx: AgentContext, o: { name: string; capabilities: AcpClientCapabilities; sessionId: () => string }): AcpClient {
  return {
    name: o.name,
    capabilities: o.capabilities,
    readTextFile: (path, signal) => asked('fs/read_text_file', async () => (await cx.request(methods.client.fs.readTextFile, { sessionId: o.sessionId(), path }, cancelling(signal))).content),
    writeTextFile: (path, content, signal) =>
      asked('fs/write_text_file', async () => {
        await cx.request(methods.client.fs.writeTextFile, { sessionId: o.sessionId(), path, content }, cancelling(signal));
      }),
    createTerminal: (request, signal) =>
      asked('terminal/create', async () => {
        const handle = await cx.createTerminal({ sessionId: o.sessionId(), command: request.command, args: [...request.args], cwd: request.cwd, outputByteLimit: request.outputByteLimit, env: [] }, cancelling(signal));
        let released: Promise<void> | undefined;
        const terminal: AcpTerminal = {
          id: handle.id,
          waitForExit: () => asked('terminal/wait_for_exit', async () => {
            const r = await handle.waitForExit();
            return { exitCode: r.exitCode ?? null, signal: r.signal ?? null };
          }),
          output: () => asked('terminal/output', async () => {
            const r = await handle.currentOutput();
            return { output: r.output, truncated: r.truncated };
          }),
          kill: () => asked('terminal/kill', async () => {
            await handle.kill();
          }),
          release: () => (released ??= asked('terminal/release', async () => {
            await handle.release();
          })),
        };
        return terminal;
      }),
  };
}
