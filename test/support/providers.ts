// The test process's composition root, as the CLI's (src/cli/main.ts): tests that call
// `createModel` or `createJudge` find the shipped providers (openai, gguf, sim) registered.
import { registerDefaultProviders } from '../../src/providers/default.js';

registerDefaultProviders();
