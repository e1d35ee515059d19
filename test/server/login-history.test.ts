import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerCli, startServerCli } from '../support/server-cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Logging in to `stepwise serve --token-file` leaves the token in no address the browser keeps
 * (issue #32, item 4): a real Chromium with a persistent profile logs in through the form, uses
 * the page, and its History database (every table, every text column) holds no trace of the token.
 */

const CHROMIUM = process.env.STEPWISE_CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = 'tok-history-7c1e94d0a2b3';
const home = tempDir('stepwise-login-');
let server: ServerCli;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: this test needs Debian's chromium (apt-get install chromium) or STEPWISE_CHROMIUM=<path>`,
    );
  const dir = join(home, 'outputs');
  mkdirSync(dir);
  writeFileSync(join(dir, 'report.json'), JSON.stringify({ subsets: { gsm8k: { f1: 50 } }, average_f1: 50 }));
  const tokenFile = join(home, 'token.txt');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  server = await startServerCli(['serve', '--dir', dir, '--port', '0', '--token-file', tokenFile], home);
});
afterAll(async () => {
  await server?.stop();
});

/** Every text value of every table of an SQLite file. */
function allText(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const out: string[] = [];
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    for (const { name } of tables)
      for (const row of db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`).all() as Record<
        string,
        unknown
      >[])
        for (const v of Object.values(row)) {
          if (typeof v === 'string') out.push(v);
          else if (Buffer.isBuffer(v)) out.push(v.toString('latin1'));
        }
    return out;
  } finally {
    db.close();
  }
}

describe('web view login', () => {
  it('logging in through the form leaves the token in no History entry of a persistent Chromium profile', async () => {
    const profile = join(home, 'chromium-profile');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox'],
    });
    try {
      const tab = context.pages()[0] ?? (await context.newPage());
      await tab.goto(`${server.url}/`);
      await tab.fill('input[name=token]', TOKEN);
      await Promise.all([tab.waitForURL(`${server.url}/`), tab.click('button[type=submit]')]);
      // Logged in: the app's own page, then a view that needs the API.
      await tab.goto(`${server.url}/#/files`);
      await tab.waitForSelector('#files tbody tr');
      expect(tab.url()).not.toContain(TOKEN);
      const cookies = await context.cookies(server.url);
      expect(cookies.find((c) => c.name === 'stepwise_token')?.httpOnly).toBe(true);
    } finally {
      await context.close();
    }
    const history = join(profile, 'Default', 'History');
    const text = allText(history);
    // The history was written (the page's address is in it), and the token is nowhere in it.
    expect(text.some((t) => t.startsWith(server.url))).toBe(true);
    expect(text.filter((t) => t.includes(TOKEN))).toEqual([]);
    expect(text.filter((t) => t.includes(encodeURIComponent(TOKEN)))).toEqual([]);
  }, 120_000);
});
