// Module hooks: the conformance suite's `fs` import resolves to `node20-fs.mjs`; every other import is Node's.
const shim = new URL('./node20-fs.mjs', import.meta.url).href;
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) return { url: shim, shortCircuit: true };
  return next(specifier, context);
}
