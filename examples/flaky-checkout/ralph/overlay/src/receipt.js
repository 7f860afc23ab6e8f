// A receipt for a paid checkout. The shop's name comes from the settings
// service, which answers after a few milliseconds.
async function shopName() {
  await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10));
  return 'The Corner Shop';
}

/** The receipt of a paid total (cents), stamped with when it was printed. */
export async function printReceipt(total) {
  const shop = await shopName();
  return { shop, total, printedAt: new Date().toISOString() };
}
