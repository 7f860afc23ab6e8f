// `node --import ./node20.mjs …/conformance/dist/index.js`: registers the hooks before the suite loads.
import { register } from 'node:module';
register('./node20-hooks.mjs', import.meta.url);
