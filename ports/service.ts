/**
 * A service's key: a stable string that also carries the service's type.
 * Every seam declares its key once, in `ports/index.ts`; a plugin finds a
 * service by key, never by importing a provider.
 */
export interface ServiceKey<T> {
  readonly id: string;
  /** Never set; lets `get(key)` return `T`. */
  readonly type?: T;
}

export const serviceKey = <T>(id: string): ServiceKey<T> => ({ id });

/** A key as a plugin may name it: the typed key, or (a plugin written in plain JavaScript) its string. */
export type KeyLike<T = unknown> = ServiceKey<T> | string;
export const keyId = (k: KeyLike): string => (typeof k === 'string' ? k : k.id);

/** What a provider may ask of the host while it builds its service. */
export interface ServiceLookup {
  /** Contract: returns the service visible to the asker; throws if none is. */
  get<T>(key: KeyLike<T>): T;
  has(key: KeyLike): boolean;
  /** Runs `cleanup` when the provider's row is unmounted (a process to stop, a file to close). */
  onDispose(cleanup: () => void): void;
}
