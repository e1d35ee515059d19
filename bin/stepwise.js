#!/usr/bin/env node
// The CLI runs from the built library (dist/), which `npm ci` builds through the `prepare` script.
import { main } from '../dist/cli/main.js';

await main(process.argv);
