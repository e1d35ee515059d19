import { afterAll } from 'vitest';
import { removeTempDirs } from './temp.js';

// Runs in every test file (vitest setupFiles): the folders tempDir made go when the file is done.
afterAll(() => removeTempDirs());
