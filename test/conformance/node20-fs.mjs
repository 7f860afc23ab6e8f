// `fs` as the conformance suite imports it, on Node 20: Node's own, plus a `globSync` (Node 22's), which the suite
// imports at load but uses only outside the client scenarios bridle runs. Calling it says so rather than guessing.
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node 22; bridle runs the conformance suite on Node 20 for its client scenarios only');
}
