/** A cart of line items; adding a sku that is already there raises its quantity. */
export function createCart() {
  const quantities = new Map();
  return {
    add(sku, quantity = 1) {
      if (!Number.isInteger(quantity) || quantity < 1) {
        throw new RangeError(`bad quantity for ${sku}: ${quantity}`);
      }
      quantities.set(sku, (quantities.get(sku) ?? 0) + quantity);
    },
    lines() {
      return [...quantities].map(([sku, quantity]) => ({ sku, quantity }));
    },
  };
}
