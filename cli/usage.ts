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
import type { SessionStore } from '../ports/store.js';
import { storeOfRows } from '../runtime/stores.js';
import type { Product } from './settings.js';

/** Contract: reads only; a child log that is not there is left out of the tree, never guessed. */
export function usageOfProduct(product: Pick<Product, 'rows' | 'home'>): UsageOf {
  const prices = pricesIn(product);
  // One store object for every session: a Postgres store holds a pool.
  let store: SessionStore | undefined;
  return async (_id, entries) => {
    store ??= storeOfRows(product.rows, product.home);
    const children = await childrenOf(entries, childReaderOf(store));
    return costOf(entries, prices, (child) => children.get(child));
  };
}
