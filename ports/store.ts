/** The store seam's port: the contract of `log/store.ts`, as the providers in `adapters/store/` implement it. */
export type { LogStore } from '../log/store.js';
