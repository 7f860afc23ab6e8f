import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStock } from '../src/stock.js';

test('reserving lowers the stock', async () => {
  const stock = createStock({ apple: 5 });
  stock.reserve('apple', 2);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(stock.left('apple'), 3);
});

test('refuses to reserve more than is left', async () => {
  const stock = createStock({ bread: 1 });
  await assert.rejects(stock.reserve('bread', 2), /only 1 bread left/);
});
