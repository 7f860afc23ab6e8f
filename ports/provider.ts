/**
 * The one shape of every provider of every seam: which seam it provides,
 * its name (what a row's `use` says), the zod schema of its row's config,
 * and `create`, which builds the service from a parsed config. Every file
 * in `adapters/<seam>/<provider>.ts` exports one of these; the runtime's
 * catalogue mounts it as a plugin that provides `seam`.
 */
import type { z } from 'zod';
import type { KeyLike, ServiceKey, ServiceLookup } from './service.js';

export interface ProviderDefinition<S, C = Record<string, never>> {
  readonly seam: ServiceKey<S>;
  /** The row's `use`, e.g. `openai`, `jsonl`, `local`. */
  readonly name: string;
  /** The row's config; defaults are filled here, visibly, by the schema. */
  readonly config: z.ZodType<C>;
  /** Other services `create` needs (the sandbox a subprocess provider confines with). */
  readonly inject?: readonly KeyLike[];
  /** Contract: builds the service; throws for a config it cannot honour (named in the mount error). */
  create(config: C, services: ServiceLookup): S;
}

/** Contract: identity; lets TypeScript infer `S` and `C` from the object. */
export function defineProvider<S, C>(d: ProviderDefinition<S, C>): ProviderDefinition<S, C> {
  return d;
}

/**
 * The environment is not set up for a provider (no API key, a server it
 * cannot reach): not a mistake in the row, so the CLI exits 1, not 2.
 */
export class ProviderSetupError extends Error {
  override name = 'ProviderSetupError';
}
