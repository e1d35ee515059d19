// The test process's provider registry, as the CLI's (src/cli/providers.ts): tests that build a
// model or a judge from a spec hand it this value.
import { createDefaultRegistry } from '../../src/providers/default.js';

export const providers = createDefaultRegistry();
