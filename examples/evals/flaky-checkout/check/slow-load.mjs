// Preloaded by the check (node --import): the catalog's simulated latency is
// slow for every load() and fast for every price lookup, so a test that does
// not wait for the load fails every time instead of about one run in six.
Math.random = () => (/\bat (?:Object\.)?load\b/.test(new Error().stack ?? '') ? 0 : 0.5);
