/** The clock seam's port. A consumer imports only this type; the provider is a row (`clock`). */
export type { Clock } from '../log/clock.js';
