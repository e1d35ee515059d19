import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilesResponse } from '../../src/server/api.js';
import { startWebServer } from '../../src/server/app.js';
import { type ServerCli, startServerCli } from '../support/server-cli.js';
import { tempDir } from '../support/temp.js';

/**
 * The web view's server reads only inside its folders (issue #32, items 1 and 5): a subfolder
 * swapped for a symlink to another folder while requests run serves nothing from that folder,
 * and the listing holds exactly the files `/api/file` opens, by relative paths.
 */

const home = tempDir('stepwise-inside-');
const served = join(home, 'served');
const outside = join(home, 'outside');
let server: ServerCli;

beforeAll(async () => {
  mkdirSync(join(served, 'sub'), { recursive: true });
  mkdirSync(outside);
  // The same names inside and outside: a read through the swapped folder finds a file either way.
  const inside = JSON.stringify({ where: 'inside' });
  const secret = JSON.stringify({ where: 'OUTSIDE-SECRET' });
  for (const dir of [join(served, 'sub'), outside]) {
    const text = dir === outside ? secret : inside;
    writeFileSync(join(dir, 'a.json'), text);
    writeFileSync(join(dir, 'b.jsonl'), `${text}\n${text}\n`);
  }
  server = await startServerCli(['serve', '--dir', served, '--port', '0'], home);
});
afterAll(async () => {
  await server?.stop();
});

/**
 * A separate process that swaps `served/sub` between the real folder and a symlink to `outside`
 * as fast as it can, until killed (by PID). Each state lasts a moment so both are met.
 */
function startSwapper(): { stop: () => Promise<void> } {
  const script = `
    const fs = require('node:fs');
    const [sub, keep, target] = process.argv.slice(1);
    for (;;) {
      fs.renameSync(sub, keep);
      fs.symlinkSync(target, sub);
      fs.unlinkSync(sub);
      fs.renameSync(keep, sub);
    }`;
  const child = spawn(
    process.execPath,
    ['-e', script, join(served, 'sub'), join(served, 'sub-kept'), outside],
    {
      stdio: 'ignore',
    },
  );
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid as number, 'SIGKILL');
      }),
  };
}

describe('serve: no read outside the served folder', () => {
  it('a subfolder swapped for a symlink to another folder during 400 requests serves 0 files from it', async () => {
    const swapper = startSwapper();
    const outcomes = { inside: 0, outside: 0, refused: 0 };
    const targets = [
      '/api/file?root=0&path=sub/a.json',
      '/api/file?root=0&path=sub/b.jsonl',
      '/api/summary?root=0&path=sub/b.jsonl',
    ];
    try {
      // Four requests in flight at a time, so the server is busy while the folder changes under it.
      for (let round = 0; round < 100; round++) {
        await Promise.all(
          [0, 1, 2, 3].map(async (i) => {
            const res = await fetch(server.url + targets[(round + i) % targets.length]);
            const text = await res.text();
            if (text.includes('OUTSIDE-SECRET')) outcomes.outside++;
            else if (res.status === 200) outcomes.inside++;
            else outcomes.refused++;
          }),
        );
      }
    } finally {
      await swapper.stop();
    }
    expect(outcomes.outside, JSON.stringify(outcomes)).toBe(0);
    // Both states were met: the race was run, not missed.
    expect(outcomes.inside, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.inside + outcomes.refused).toBe(400);
  });
});

describe('/api/files lists exactly what /api/file opens', () => {
  it('every listed file opens, every other file there is refused, paths are relative', async () => {
    const dir = join(home, 'listing');
    mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
    mkdirSync(join(dir, '.hidden'));
    writeFileSync(join(dir, 'ok.json'), '{"a": 1}');
    writeFileSync(join(dir, 'broken.json'), '{"a": ');
    writeFileSync(join(dir, 'rows.jsonl'), '{"id": "x"}\nnot json\n');
    writeFileSync(join(dir, 'deep', 'er', 'inner.json'), '[1, 2]');
    writeFileSync(join(dir, '.hidden', 'x.json'), '{}');
    writeFileSync(join(dir, 'notes.txt'), 'x');
    symlinkSync(join(dir, 'ok.json'), join(dir, 'link-inside.json'));
    symlinkSync(join(outside, 'a.json'), join(dir, 'link-out.json'));
    symlinkSync(join(dir, 'deep'), join(dir, 'deep-link'));
    execFileSync('mkfifo', [join(dir, 'pipe.json')]);
    const s = await startWebServer({ roots: [dir], storePath: join(home, 'store.sqlite') });
    try {
      const listing = (await (await fetch(`${s.url}/api/files`)).json()) as FilesResponse;
      const listed = listing.files.map((f) => f.path).sort();
      expect(listed).toEqual(['deep/er/inner.json', 'ok.json', 'rows.jsonl']);
      for (const r of listing.roots) expect(r.startsWith('/'), r).toBe(false);
      expect(JSON.stringify(listing)).not.toContain(home);
      const status = async (p: string) =>
        (await fetch(`${s.url}/api/file?root=0&path=${encodeURIComponent(p)}`)).status;
      for (const p of listed) expect(await status(p), p).toBe(200);
      for (const p of [
        'broken.json',
        '.hidden/x.json',
        'notes.txt',
        'link-inside.json',
        'link-out.json',
        'deep-link/er/inner.json',
        'pipe.json',
      ])
        expect(await status(p), p).toBe(404);
    } finally {
      await s.close();
    }
  });
});
