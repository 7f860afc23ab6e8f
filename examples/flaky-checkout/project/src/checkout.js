const DISCOUNTS = { SAVE10: 0.1, WELCOME5: 0.05 };

/** Prices every line of the cart and applies an optional discount code. All amounts in cents. */
export async function checkout(cart, catalog, code) {
  const rate = code === undefined ? 0 : DISCOUNTS[code];
  if (rate === undefined) throw new Error(`unknown discount code: ${code}`);

  const lines = cart.lines();
  const prices = await Promise.all(lines.map((line) => catalog.priceOf(line.sku)));
  const subtotal = lines.reduce((sum, line, i) => sum + line.quantity * prices[i], 0);
  const discount = Math.round(subtotal * rate);
  return { subtotal, discount, total: subtotal - discount };
}
