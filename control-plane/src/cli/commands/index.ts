import type { CommandSpec, Options } from '../command.js';
import { login, logout, whoami } from './auth.js';
import { guardrailCommands } from './guardrails.js';
import { health } from './health.js';
import { keyCommands } from './keys.js';
import { budgetCommands } from './budgets.js';
import { batchCommands } from './batches.js';
import { memberCommands } from './members.js';
import { projectCommands } from './projects.js';
import { recordCommands } from './records.js';
import { userCommands } from './users.js';

/** Every gatewayctl command, in the order the help lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  login,
  logout,
  whoami,
  ...projectCommands,
  ...keyCommands,
  ...budgetCommands,
  ...batchCommands,
  ...memberCommands,
  ...guardrailCommands,
  ...userCommands,
  ...recordCommands,
  health,
];

export const GLOBAL_OPTIONS: Options = {
  output: { type: 'string', short: 'o', value: '<table|json|csv>', help: 'output format (default: table on a terminal, json otherwise)' },
  verbose: { type: 'boolean', short: 'v', help: 'print each HTTP request and the answer status on stderr (never the token)' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};
