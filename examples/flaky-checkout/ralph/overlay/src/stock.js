// Stock levels, kept by an in-memory stand-in for the warehouse service:
// a reservation pays the service's latency (a few ms, sometimes more).
export function createStock(levels) {
  const left = new Map(Object.entries(levels));
  return {
    /** Takes `quantity` of `sku` off the shelf. */
    async reserve(sku, quantity) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() < 0.5 ? 1 : 12));
      const have = left.get(sku) ?? 0;
      if (quantity > have) throw new RangeError(`only ${have} ${sku} left`);
      left.set(sku, have - quantity);
    },
    left: (sku) => left.get(sku) ?? 0,
  };
}
