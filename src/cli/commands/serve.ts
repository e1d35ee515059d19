import type { Command } from 'commander';
import { isSimulatedJudge } from '../../evaluate/processbench.js';
import { createJudge } from '../../judge/index.js';
import {
  REWARD_KINDS,
  type RewardKind,
  type StepAggregation,
  startRewardServer,
} from '../../train/reward-server.js';
import { baseUrlOption } from '../option-groups.js';
import { choiceOption, floatOption, intOption } from '../options.js';
import { providers } from '../providers.js';
import { serveCommand } from '../serve-command.js';
import { TOKEN_HELP, tokenFromFlags } from '../token.js';
import { addAlias, apiKeyOption } from '../vocabulary.js';

export function register(program: Command): void {
  const cmd = serveCommand(program)
    .command('rewards')
    .description("Serve rewards over OpenRLHF's protocol (POST /get_reward) for OpenRLHF and verl")
    .requiredOption(
      '--kind <kind>',
      `reward: ${REWARD_KINDS.join(' | ')}`,
      choiceOption('--kind', REWARD_KINDS),
    )
    .option('--port <n>', 'port (0 = any free port)', intOption('--port', 0), 8765)
    .option(
      '--host <host>',
      'address to bind; anything but loopback requires a token (and TLS or a tunnel in front)',
      '127.0.0.1',
    )
    .option(
      '--token <token>',
      `require \`Authorization: Bearer <token>\` on every request; ${TOKEN_HELP.token}`,
    )
    .option('--token-file <file>', TOKEN_HELP.tokenFile)
    .option(
      '--format-penalty <r>',
      'judge-agreement: reward for a response without a boxed verdict',
      floatOption('--format-penalty'),
      0,
    )
    .option('--judge <spec>', 'judge: the stepwise judge whose aggregated chunk score is the reward')
    .option(
      '--aggregation <how>',
      'judge: min | mean | last | product of chunk scores',
      choiceOption('--aggregation', ['min', 'mean', 'last', 'product'] as const),
      'min',
    )
    .addOption(baseUrlOption('for openai: judges (or OPENAI_BASE_URL)'))
    .addOption(apiKeyOption())
    .action(async (o) => {
      const judge = o.judge
        ? await createJudge(o.judge, { providers, settings: { baseUrl: o.baseUrl, apiKey: o.apiKey } })
        : undefined;
      const server = await startRewardServer({
        kind: o.kind as RewardKind,
        port: o.port,
        host: o.host,
        token: tokenFromFlags(o),
        formatPenalty: o.formatPenalty,
        judge,
        aggregate: o.aggregation as StepAggregation,
      });
      if (judge && isSimulatedJudge(judge)) {
        process.stderr.write('note: the judge is SIMULATED (stepwise sim world), not a real model\n');
      }
      process.stderr.write(`stepwise reward server (${o.kind}) listening on ${server.url}/get_reward\n`);
      const stop = async () => {
        // Whatever it is doing (a request in flight, a judge that does not answer), the server
        // is gone within a second.
        setTimeout(() => process.exit(0), 1000).unref();
        await server.close();
        await judge?.close?.();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  addAlias(cmd, '--aggregation', '--aggregate');
}
