/** A new single-use coupon code for a customer. */
export function newCouponCode() {
  return `C${Math.floor(Math.random() * 100)}`;
}
