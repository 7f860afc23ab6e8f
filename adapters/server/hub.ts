/** The sessions one server hosts, by id. */
import type { InspectionEvent, Observer } from 'xstate';
import { HostedSession, type CreateParams, type OpenSession } from './hosted-session.js';
import { ErrorCode, RpcFailure, type SessionSummary } from './protocol.js';

export class Hub {
  private readonly sessions = new Map<string, HostedSession>();

  constructor(
    private readonly openSession: OpenSession,
    private readonly onProblem: (message: string) => void = () => undefined,
    private readonly inspect?: Observer<InspectionEvent>,
  ) {}

  /** Contract: a failure to open becomes an `RpcFailure` (CreateFailed) naming the cause. */
  async create(params: CreateParams): Promise<HostedSession> {
    let hosted: HostedSession;
    try {
      hosted = await HostedSession.open(this.openSession, params, this.onProblem, this.inspect);
    } catch (err) {
      throw new RpcFailure(ErrorCode.CreateFailed, `could not create the session: ${(err as Error)?.message ?? String(err)}`);
    }
    this.sessions.set(hosted.id, hosted);
    return hosted;
  }

  get(sessionId: string): HostedSession {
    const s = this.sessions.get(sessionId);
    if (!s) throw new RpcFailure(ErrorCode.UnknownSession, `no session ${JSON.stringify(sessionId)} in this server`);
    return s;
  }

  list(): SessionSummary[] {
    return [...this.sessions.values()].map((s) => s.summary());
  }

  all(): HostedSession[] {
    return [...this.sessions.values()];
  }

  /** Contract: closes every session (logs flushed); never rejects. */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.close().catch((err) => this.onProblem(`closing ${s.id}: ${String(err)}`))));
  }
}
