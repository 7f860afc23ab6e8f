/**
 * The hosts' usage figures (`bridle acp`'s `usage_update`, `bridle serve`'s
 * `session/cost`): `bridle cost`'s projection of a live session's entries and
 * of its subagents' logs, read where the product's store keeps them, priced
 * with the product's `prices` row. One implementation for every surface.
 */
import { costOf } from '../log/cost.js';
import type { UsageOf } from '../server/usage.js';
import { pricesIn } from './cost.js';
import { childReaderOf, childrenOf } from './session-tree.js';
import { targetOf, type StoreTarget } from './session-store.js';
import type { Product } from './settings.js';

/** Contract: reads only; a child log that is not there is left out of the tree, never guessed. */
export function usageOfProduct(product: Pick<Product, 'rows' | 'home'>): UsageOf {
  const prices = pricesIn(product);
  // One store object for every session: a Postgres store holds a pool.
  let first: StoreTarget | undefined;
  return async (id, entries) => {
    first ??= targetOf(product.rows, product.home, id);
    const at: StoreTarget = first.kind === 'postgres' ? { ...first, id } : targetOf(product.rows, product.home, id);
    const children = await childrenOf(entries, childReaderOf(at));
    return costOf(entries, prices, (child) => children.get(child));
  };
}
