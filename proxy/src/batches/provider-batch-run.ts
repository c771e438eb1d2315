import { setTimeout as sleep } from 'node:timers/promises';
import { Errors, GatewayError, type BatchRow, type BatchSubmission, type ClaimedLine, type LineResult } from '@gateway/shared';
import type { Logger } from 'pino';
import type { GatewayDeps } from '../pipeline/context.js';
import type { LineChains } from '../pipeline/endpoints.js';
import type { BatchLine, ProviderBatchResult, ProviderBatches } from '../providers/provider-batches.js';
import type { BatchStore } from './batch-store.js';
import { runLine } from './batch-line.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import type { HandedOff } from './line-exchange.js';

/**
 * The provider-run part of a batch (docs/batches.md "Provider-run batches"): lines handed off by
 * their chain (provider-line-steps.ts) are gathered per provider and operation and sent as one
 * provider batch each (up to SUBMISSION_LINES lines or SUBMISSION_BYTES), recorded with the
 * control plane as soon as the provider took them; then, at each poll, an ended provider batch
 * is collected: each result runs the line's collect chain (metered at the batch price, the output
 * guardrails, the line's own protocol, its records) and is stored as the line's answer.
 */
const SUBMISSION_LINES = 10_000;
const SUBMISSION_BYTES = 64 * 1024 * 1024;
const COLLECT_PAGE = 100;
const SUBMIT_TRIES = 3;

/** The provider's id of a line in its batch: the line's number, never the client's custom_id (it may not fit the provider's rules). */
function customIdOf(lineNo: number): string {
  return `l${lineNo}`;
}

function lineNoOf(customId: string): number | null {
  if (!/^l\d{1,10}$/.test(customId)) return null;
  return Number(customId.slice(1));
}

interface Group {
  provider: string;
  operation: string;
  lines: BatchLine[];
  lineNos: number[];
  claimed: ClaimedLine[];
  giveBacks: (() => void)[];
  bytes: number;
}

/** A batch run's lines handed off and not yet sent. */
export class HandOffs {
  private readonly groups = new Map<string, Group>();
  private sequence = 0;

  constructor(
    private readonly deps: GatewayDeps,
    private readonly store: BatchStore,
    private readonly chains: LineChains,
    private readonly run: CollectingRun,
    private readonly log: Logger,
  ) {}

  private get batch(): BatchRow {
    return this.run.batch;
  }

  /** Adds the line; when its group is full, resolves once the group is sent. */
  async add(line: ClaimedLine, handed: HandedOff): Promise<void> {
    const key = `${handed.provider}\n${handed.operation}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { provider: handed.provider, operation: handed.operation, lines: [], lineNos: [], claimed: [], giveBacks: [], bytes: 0 };
      this.groups.set(key, group);
    }
    group.lines.push({ customId: customIdOf(line.line_no), body: handed.body });
    group.lineNos.push(line.line_no);
    group.claimed.push(line);
    group.giveBacks.push(handed.giveBack);
    group.bytes += handed.body.length + 100;
    if (group.lines.length >= SUBMISSION_LINES || group.bytes >= SUBMISSION_BYTES) {
      this.groups.delete(key);
      await this.submit(group);
    }
  }

  /**
   * Sends every group left (a group not sent because one before it failed is given back). A group
   * under its provider's minimum (the batch's lines were split over several providers or models)
   * is given back too, and resolved with: those lines are for the gateway to run.
   */
  async flush(): Promise<ClaimedLine[]> {
    const groups = [...this.groups.values()];
    this.groups.clear();
    const small: ClaimedLine[] = [];
    try {
      while (groups.length > 0) {
        const group = groups.shift()!;
        if (group.lines.length < (batchesOf(this.deps, group.provider)?.minLines ?? 1)) {
          for (const giveBack of group.giveBacks) giveBack();
          small.push(...group.claimed);
          continue;
        }
        await this.submit(group);
      }
    } finally {
      for (const group of groups) for (const giveBack of group.giveBacks) giveBack();
    }
    return small;
  }

  /**
   * The lines not sent are left unanswered (the batch stopped, or this proxy does: the run that
   * takes the batch over claims them again), and what they were charged is given back.
   */
  discard(): void {
    for (const group of this.groups.values()) for (const giveBack of group.giveBacks) giveBack();
    this.groups.clear();
  }

  /**
   * Sends the group as one provider batch and records it; a provider that refuses it three times
   * has its lines answered with the refusal. A failure to record it fails the run (its lines are
   * then claimed and sent again by the run that takes the batch over).
   */
  private async submit(group: Group): Promise<void> {
    const batches = batchesOf(this.deps, group.provider);
    const tag = `${this.batch.id}-${++this.sequence}`;
    let upstreamId: string | null = null;
    let failure: GatewayError = Errors.providerFailed(group.provider);
    for (let tried = 0; tried < SUBMIT_TRIES && batches !== null && upstreamId === null; tried++) {
      try {
        upstreamId = await batches.submit(group.operation, group.lines, tag);
      } catch (err) {
        failure = err instanceof GatewayError ? err : Errors.providerFailed(group.provider, err);
        this.log.warn({ batch: this.batch.id, provider: group.provider, err: failure.message }, 'provider batch not taken; trying again');
        if (tried < SUBMIT_TRIES - 1) await sleep(1_000 * 2 ** tried);
      }
    }
    if (upstreamId === null) {
      // Answered through the line's collect chain with the refusal as the provider's answer: audited and recorded as a failure.
      const refusal = failedAnswer(failure.message);
      await answerLines(this.deps, this.store, this.chains, this.run, group.provider, group.lineNos.map((lineNo) => ({ customId: customIdOf(lineNo), outcome: 'answered', status: 502, body: refusal })));
      return;
    }
    await this.store.addSubmission(this.batch.id, { provider: group.provider, upstream_id: upstreamId, line_nos: group.lineNos });
  }
}

export function batchesOf(deps: GatewayDeps, provider: string): ProviderBatches | null {
  return deps.router.adapterNamed(provider)?.batches ?? null;
}

/** What collecting a submission needs of the run it belongs to. */
export interface CollectingRun {
  readonly batch: BatchRow;
  readonly keyHash: string;
  /** Queues an answer to be stored (the run sends them in pages). */
  answered(result: LineResult): Promise<void>;
  /** Resolves once every answer queued is stored. */
  stored(): Promise<void>;
  /** False once the batch stops (cancelled, its key deleted). */
  readonly going: boolean;
}

/**
 * Collects an ended provider batch: every answer it holds for a line not answered yet runs that
 * line's collect chain; a line it holds no answer for (and did not cancel or expire) is answered
 * as a provider failure. Sent again after a crash: lines answered already are skipped, and their
 * records carry the same ids. False when some answer could not be stored as final (this proxy
 * began to drain under it): the submission is then collected again at the next poll.
 */
export async function collect(deps: GatewayDeps, store: BatchStore, chains: LineChains, run: CollectingRun, submission: BatchSubmission, batches: ProviderBatches): Promise<boolean> {
  let page: Answered[] = [];
  let stopped = false;
  let whole = true;
  for await (const result of batches.results(submission.upstream_id)) {
    if (result.outcome !== 'answered') {
      stopped = true;
      continue;
    }
    if (lineNoOf(result.customId) === null) continue;
    page.push(result);
    if (page.length >= COLLECT_PAGE) {
      whole = (await answerLines(deps, store, chains, run, submission.provider, page)) && whole;
      page = [];
    }
  }
  if (page.length > 0) whole = (await answerLines(deps, store, chains, run, submission.provider, page)) && whole;
  if (!whole) return false;
  // Lines the provider cancelled or let expire are the batch's to end (cancelled, expired).
  if (stopped || !run.going) return true;
  // The others run their chain with a provider failure as the answer: audited and recorded as one.
  await run.stored();
  return answerUnanswered(deps, store, chains, run, submission, Errors.providerBatchNoResult(submission.provider).message);
}

/** The submission's lines not answered yet, each answered through its collect chain as a provider failure saying `message`. */
export async function answerUnanswered(deps: GatewayDeps, store: BatchStore, chains: LineChains, run: CollectingRun, submission: BatchSubmission, message: string): Promise<boolean> {
  const failed = failedAnswer(message);
  for (let after = -1; ; ) {
    const lines: ClaimedLine[] = await store.lines(run.batch.id, { submission_id: submission.id, after, limit: COLLECT_PAGE });
    if (lines.length === 0) return true;
    if (!(await answerLines(deps, store, chains, run, submission.provider, lines.map((line) => ({ customId: customIdOf(line.line_no), outcome: 'answered', status: 502, body: failed })), lines))) return false;
    await run.stored();
    after = lines[lines.length - 1]!.line_no;
  }
}

type Answered = Extract<ProviderBatchResult, { outcome: 'answered' }>;

/** A provider failure as the answer a provider would have given (the collect chain reads it as a 502). */
function failedAnswer(message: string): Buffer {
  return Buffer.from(JSON.stringify({ error: { message } }));
}

/**
 * Each answer runs its line's collect chain (lines answered already are skipped); the line's
 * answer is queued. A line this proxy refused for now (it drains: 503, or the line was stopped)
 * is left unanswered, its provider's answer still there for the next collection: false then.
 */
async function answerLines(deps: GatewayDeps, store: BatchStore, chains: LineChains, run: CollectingRun, provider: string, answers: readonly Answered[], known?: ClaimedLine[]): Promise<boolean> {
  let whole = true;
  const chain = chains[run.batch.endpoint];
  const byLine = new Map<number, Answered>();
  for (const answer of answers) byLine.set(lineNoOf(answer.customId)!, answer);
  const lines = known ?? (await store.lines(run.batch.id, { line_nos: [...byLine.keys()] }));
  await Promise.all(
    lines.map(async (line) => {
      const result = byLine.get(line.line_no)!;
      const request = JSON.parse(line.content) as { custom_id: string; body: unknown };
      const running = runLine(deps, chain, run.batch, run.keyHash, line, Buffer.from(JSON.stringify(request.body)), 'collected', { provider, result });
      const answer = await running.answer;
      if (answer.status === CLIENT_CLOSED || (answer.status === 503 && answer.errorCode === 'UNAVAILABLE')) {
        whole = false;
        return;
      }
      await run.answered({ line_no: line.line_no, custom_id: request.custom_id, status_code: answer.status, request_id: answer.requestId, body: answer.body });
    }),
  );
  return whole;
}
