import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printReceipt } from '../src/receipt.js';

test('stamps the receipt with the time it was printed', async () => {
  const now = new Date().toISOString();
  const r = await printReceipt(1259);
  assert.equal(r.printedAt.slice(0, 22), now.slice(0, 22));
});

test('names the shop and the total', async () => {
  const r = await printReceipt(1259);
  assert.deepEqual([r.shop, r.total], ['The Corner Shop', 1259]);
});
