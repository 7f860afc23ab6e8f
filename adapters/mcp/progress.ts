/**
 * One call's progress as one increasing count. A call the server runs as a task reports twice over: the server's
 * `notifications/progress` for the call's token (counted by the server), and bridle's polls of the task (counted
 * by bridle, each carrying the task's status message). Each source counts from 1, so passed on as they come the
 * reports went 1, 2, 1, 2, 3, and MCP requires a token's progress to increase (2025-11-25, "Progress").
 */
import type { ToolProgress } from '../../ports/tools.js';

/**
 * Contract: pure apart from `sink`. A report that increases the count passes as it is; one that does not (the
 * other source is ahead) counts one past the last report, and drops a `total` the count has passed.
 */
export function increasingProgress(sink: (p: ToolProgress) => void): (p: ToolProgress) => void {
  let last = 0;
  return (p) => {
    const progress = p.progress > last ? p.progress : last + 1;
    last = progress;
    sink({ progress, ...(p.total !== undefined && p.total >= progress ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) });
  };
}
