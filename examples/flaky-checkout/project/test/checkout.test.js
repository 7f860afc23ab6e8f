import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCart } from '../src/cart.js';
import { createCatalog } from '../src/catalog.js';
import { checkout } from '../src/checkout.js';

const PRICES = { apple: 120, bread: 350, coffee: 899 };
const catalog = createCatalog();
let cart;

beforeEach(() => {
  catalog.load(PRICES);
  cart = createCart();
});

test('totals the line items', async () => {
  cart.add('apple', 3);
  cart.add('coffee');
  assert.deepEqual(await checkout(cart, catalog), { subtotal: 1259, discount: 0, total: 1259 });
});

test('applies a discount code', async () => {
  cart.add('bread', 2);
  cart.add('coffee');
  assert.deepEqual(await checkout(cart, catalog, 'SAVE10'), { subtotal: 1599, discount: 160, total: 1439 });
});

test('merges repeated adds of the same item', async () => {
  cart.add('apple');
  cart.add('apple', 2);
  assert.deepEqual(cart.lines(), [{ sku: 'apple', quantity: 3 }]);
  assert.equal((await checkout(cart, catalog)).total, 360);
});

test('rejects an unknown discount code', async () => {
  cart.add('bread');
  await assert.rejects(checkout(cart, catalog, 'BOGUS'), /unknown discount code/);
});
