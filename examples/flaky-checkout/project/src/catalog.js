// An in-memory stand-in for the pricing service. Every call pays some
// simulated network latency: usually 2 ms, and now and then (about one
// call in sixteen) a slow 25 ms, like the real service.
function latency() {
  const ms = Math.random() < 0.06 ? 25 : 2;
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function createCatalog() {
  const prices = new Map();
  return {
    /** Replaces every price with the given ones ({ sku: cents }). */
    async load(entries) {
      prices.clear();
      await latency();
      for (const [sku, cents] of Object.entries(entries)) prices.set(sku, cents);
    },
    /** The price of one unit, in cents. */
    async priceOf(sku) {
      await latency();
      if (!prices.has(sku)) throw new Error(`no price for ${sku}`);
      return prices.get(sku);
    },
  };
}
