/**
 * Where a registration goes in a registry ordered by its owners' mount order:
 * after every entry whose owner ranks the same or before it. An owner's
 * registrations therefore stand where its row stands, whenever they were
 * made (an MCP server that answered late, a plugin that was reloaded), and an
 * owner the host does not rank (+Infinity) goes last, in registration order.
 */
export interface Ranked {
  readonly rank: number;
}

/** Contract: pure; returns a new array with `entry` placed after every entry ranked the same or before it. */
export function placeByRank<T extends Ranked>(list: readonly T[], entry: T): T[] {
  let at = list.length;
  while (at > 0 && list[at - 1]!.rank > entry.rank) at--;
  return [...list.slice(0, at), entry, ...list.slice(at)];
}

/** Ranks no owner: every registration goes last, in registration order. */
export const unranked = (): number => Number.POSITIVE_INFINITY;
