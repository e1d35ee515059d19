import { readFileSync } from 'node:fs';
import { StepwiseError } from '../core/errors.js';

/**
 * The access token of a server command. A token on the command line is visible to every user of
 * the machine in `ps`; `--token-file` or the STEPWISE_TOKEN environment variable keep it out.
 */
export interface TokenFlags {
  token?: string;
  tokenFile?: string;
}

export const TOKEN_HELP = {
  token: 'require this token; visible in `ps`, so prefer --token-file or STEPWISE_TOKEN',
  tokenFile: 'read the token from this file (first line); or set STEPWISE_TOKEN',
} as const;

/** The token from `--token-file`, `--token` or STEPWISE_TOKEN (in that order); undefined when none. */
export function tokenFromFlags(
  flags: TokenFlags,
  warn: (line: string) => void = (l) => process.stderr.write(l),
): string | undefined {
  if (flags.token !== undefined && flags.tokenFile !== undefined)
    throw new StepwiseError('pass --token or --token-file, not both', { exitCode: 2 });
  if (flags.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.tokenFile, 'utf8');
    } catch (e) {
      throw new StepwiseError(`--token-file ${flags.tokenFile}: ${(e as Error).message}`, { exitCode: 2 });
    }
    const token = text.split(/\r?\n/)[0].trim();
    if (!token)
      throw new StepwiseError(`--token-file ${flags.tokenFile}: line 1 is empty, expected the token`, {
        exitCode: 2,
      });
    return token;
  }
  if (flags.token !== undefined) {
    if (!flags.token.trim()) throw new StepwiseError('--token is empty', { exitCode: 2 });
    warn(
      'note: a token given with --token is visible to other users in `ps`; use --token-file or STEPWISE_TOKEN\n',
    );
    return flags.token;
  }
  const env = process.env.STEPWISE_TOKEN?.trim();
  return env ? env : undefined;
}
