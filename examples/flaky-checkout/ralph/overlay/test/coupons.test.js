import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newCouponCode } from '../src/coupons.js';

test('coupon codes are unique', () => {
  const codes = Array.from({ length: 10 }, () => newCouponCode());
  assert.equal(new Set(codes).size, codes.length);
});

test('a coupon code starts with C', () => {
  assert.match(newCouponCode(), /^C/);
});
