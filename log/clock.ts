/** Time in the log comes only from here: an injected clock, never `Date.now()` inside the log path. */
/** An injected clock: milliseconds since the epoch. */
export type Clock = () => number;
