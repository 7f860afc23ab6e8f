// Preloaded by the check (node --import): every timer the catalog's load()
// sets waits 250 ms longer, far past any price lookup's simulated latency,
// so a test that does not wait for the load fails every time instead of
// about one run in six, however busy the machine.
const setTimeoutAsWritten = globalThis.setTimeout;
globalThis.setTimeout = (fn, ms, ...args) =>
  setTimeoutAsWritten(fn, /\bat (?:Object\.)?load\b/.test(new Error().stack ?? '') ? (ms ?? 0) + 250 : ms, ...args);
