/**
 * Values `JSON.stringify` writes from their own keys and items alone: an array or an object whose prototype is the
 * plain one (or none) and that has no `toJSON`. A walk over a value that stops at anything else, and hands that to
 * `JSON.stringify` itself, renders what it would (the meter's size, the canonical JSON of a call). Pure.
 */
export const plainArray = (v: object): v is unknown[] => Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype && typeof (v as { toJSON?: unknown }).toJSON !== 'function';

export const plainObject = (v: object): v is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
};
