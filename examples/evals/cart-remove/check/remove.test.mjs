// The cart-remove check: the behaviour the prompt asks for, tested from outside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCart } from '../src/cart.js';

test('remove lowers the quantity, and drops the line at zero', () => {
  const cart = createCart();
  cart.add('apple', 3);
  cart.add('bread');
  cart.remove('apple');
  assert.deepEqual(cart.lines(), [{ sku: 'apple', quantity: 2 }, { sku: 'bread', quantity: 1 }]);
  cart.remove('apple', 2);
  assert.deepEqual(cart.lines(), [{ sku: 'bread', quantity: 1 }]);
});

test('remove refuses what the cart does not hold, and bad quantities', () => {
  const cart = createCart();
  cart.add('apple', 2);
  assert.throws(() => cart.remove('coffee'), RangeError);
  assert.throws(() => cart.remove('apple', 3), RangeError);
  for (const bad of [0, -1, 1.5, '1']) assert.throws(() => cart.remove('apple', bad), RangeError);
  assert.deepEqual(cart.lines(), [{ sku: 'apple', quantity: 2 }]);
});
