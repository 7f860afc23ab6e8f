/** The median's interval is the binomial one (ADR 0106): the order statistics the tables give, and none under 6. */
import { describe, expect, it } from 'vitest';
import { medianCi } from './stats.js';

const ranks = (n: number) => Array.from({ length: n }, (_, i) => n - i);

describe('medianCi', () => {
  it('is the order statistics of the binomial tables at 95%, whatever the order given', () => {
    expect(medianCi(ranks(6))).toEqual({ median: 3.5, low: 1, high: 6, exact: true });
    expect(medianCi(ranks(9))).toEqual({ median: 5, low: 2, high: 8, exact: true });
    expect(medianCi(ranks(20))).toMatchObject({ low: 6, high: 15 });
    expect(medianCi(ranks(30))).toMatchObject({ low: 10, high: 21 });
    expect(medianCi(ranks(60))).toMatchObject({ low: 22, high: 39 });
  });

  it('under 6 values is the whole range, said not to be a 95% interval', () => {
    expect(medianCi([3, 1, 2])).toEqual({ median: 2, low: 1, high: 3, exact: false });
    expect(medianCi([])).toMatchObject({ exact: false });
  });
});
