import type { InboundProtocol } from '../protocols/protocol.js';
import { anthropicMessages } from '../protocols/anthropic-messages/anthropic-messages.js';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import { openAiResponses } from '../protocols/openai-responses/openai-responses.js';
import type { Endpoint, Step } from './endpoint.js';
import { present, type Seams } from './seams.js';
import { estimateChat, estimateEmbeddings, maxTokensCap, modelServed, projectPolicy, quota, rateLimit } from './steps/admission.js';
import { authenticate, checkKey } from './steps/authenticate.js';
import { parseJson, readBody, refuseWhileDraining } from './steps/body.js';
import { countRequest, endTrace, settle, writeRecords } from './steps/closing.js';
import { chatUsage, embeddingsUsage } from './steps/meter.js';
import { parseCountTokens, parseEmbeddings, parseWith } from './steps/parse.js';
import { paramsJudged } from './steps/translation.js';
import { responsesState } from '../responses/state-step.js';
import { resolveItemReferences } from '../responses/item-references.js';
import { deleteResponse, listInputItems, retrieveResponse } from '../responses/stored-steps.js';
import { callEmbeddings, callModel } from './steps/provider.js';
import { batchEndpoints, type BatchEndpoints } from '../batches/batch-endpoints.js';
import { callCollected, handOffOrCall, prepaidCharges, recordsUnlessHandedOff, settleCollected } from '../batches/provider-line-steps.js';
import type { BatchEndpoint } from '@gateway/shared';
import { respondEmbeddings, respondModels, respondTokenCount, respondWith } from './steps/respond.js';

/**
 * Every endpoint of the data plane as its list of steps, top to bottom (run.ts runs them; the
 * context they share is context.ts). The steps up to `readBody` run inside the uWebSockets.js
 * callback; the rest from the body's last chunk on, synchronously up to the provider call and
 * from its answer to the response. Built once at start-up, with the optional features' seams.
 */
export interface Endpoints {
  chatCompletions: Endpoint;
  messages: Endpoint;
  responses: Endpoint;
  embeddings: Endpoint;
  countTokens: Endpoint;
  models: Endpoint;
  retrieveResponse: Endpoint;
  deleteResponse: Endpoint;
  listInputItems: Endpoint;
  /** Files, Batch and Message Batches routes (batches/batch-endpoints.ts). */
  batches: BatchEndpoints;
  /** The chains a batch's lines run through, per endpoint (batches/batch-runner.ts). */
  lines: {
    /** Lines the gateway runs itself: the routes' own chains. */
    gateway: LineChains;
    /** First pass of a provider-run line: admitted, then handed off when its provider runs batches. */
    handOff: LineChains;
    /** Second pass: the provider batch's answer metered, checked, answered and recorded. */
    collect: LineChains;
  };
}

type LineMode = 'live' | 'handOff' | 'collect';

/** One chain per endpoint a batch line may call. */
export type LineChains = Readonly<Record<BatchEndpoint, Endpoint>>;

export function buildEndpoints(seams: Seams = {}): Endpoints {
  const closing = present(seams.cacheStore, settle, countRequest, writeRecords, endTrace);

  /**
   * A stored response's route: the key's project, then the answer (audited with no endpoint, as the
   * models list is). `native`: a response its provider keeps is asked of it with the client's headers.
   */
  const stored = (answer: Step): Endpoint => ({ name: null, errors: openAiResponses, native: true, meter: null, steps: [refuseWhileDraining, checkKey, authenticate, answer], closing });

  /**
   * A model request in any inbound protocol, which only parses and renders. `mode`: `live` for
   * requests over HTTP and the lines the gateway runs itself; `handOff` and `collect` are the two
   * passes of a provider-run batch's line (batches/provider-line-steps.ts).
   */
  /** `resolve`: the protocol's own look-ups in the body before it is parsed (the Responses API's item references). */
  const model = (protocol: InboundProtocol, state?: Step, resolve?: Step, mode: LineMode = 'live'): Endpoint => {
    // Collecting work a provider has done: nothing may refuse it or answer it from elsewhere.
    const collect = mode === 'collect';
    const live = mode === 'live';
    return {
      name: protocol.endpoint,
      errors: protocol,
      native: protocol.nativeProtocol !== undefined,
      meter: chatUsage,
      steps: present<Step>(
        // authenticate (started with the headers, adopted once the body is in)
        refuseWhileDraining,
        checkKey,
        readBody,
        authenticate,
        // parse: the protocol's wire format into the internal request; the model's route
        collect ? undefined : seams.cacheRecall,
        parseJson,
        resolve,
        parseWith(protocol),
        seams.tags,
        collect ? undefined : seams.cacheLookup,
        collect ? undefined : seams.guardrailsIn,
        // admission
        projectPolicy,
        modelServed,
        paramsJudged,
        // the protocol's own state (the Responses API's kept conversations, responses/)
        state,
        maxTokensCap,
        estimateChat,
        collect ? undefined : rateLimit,
        collect ? prepaidCharges : quota,
        collect ? undefined : seams.budgets,
        // route + failover + provider
        live ? callModel : collect ? callCollected : handOffOrCall,
        seams.guardrailsOut,
        collect ? undefined : seams.cacheCollect,
        respondWith(protocol),
      ),
      // settle → records (on every way out)
      closing: live ? closing : mode === 'handOff' ? handOffClosing : lineClosing,
    };
  };
  const lineClosing = present(settleCollected, settle, countRequest, writeRecords, endTrace);
  // The hand-off pass looks the cache up, so it stores (and ends the single flight it may have begun).
  const handOffClosing = present(seams.cacheStore, settle, recordsUnlessHandedOff, endTrace);

  const chatCompletions = model(openAiChat);
  const messages = model(anthropicMessages);
  const responses = model(openAiResponses, responsesState, resolveItemReferences);
  const embeddings: Endpoint = {
    name: 'embeddings',
    errors: openAiChat,
    meter: embeddingsUsage,
    steps: present<Step>(
      refuseWhileDraining,
      checkKey,
      readBody,
      authenticate,
      seams.cacheRecall,
      parseJson,
      parseEmbeddings,
      seams.tags,
      seams.cacheLookup,
      seams.guardrailsIn,
      projectPolicy,
      modelServed,
      estimateEmbeddings,
      rateLimit,
      quota,
      seams.budgets,
      callEmbeddings,
      respondEmbeddings,
    ),
    closing,
  };
  const passOf = (mode: LineMode): LineChains => ({
    '/v1/chat/completions': model(openAiChat, undefined, undefined, mode),
    '/v1/messages': model(anthropicMessages, undefined, undefined, mode),
    '/v1/responses': model(openAiResponses, responsesState, resolveItemReferences, mode),
    // Embeddings lines are run by the gateway whoever serves them.
    '/v1/embeddings': embeddings,
  });

  return {
    chatCompletions,
    messages,
    responses,
    embeddings,
    // Counted by the gateway itself: no provider, no quota, no rate limit spent.
    countTokens: {
      // Audited on its own endpoint; no provider is called, so nothing is metered.
      name: 'messages.count_tokens',
      errors: anthropicMessages,
      meter: null,
      steps: [refuseWhileDraining, checkKey, readBody, authenticate, parseJson, parseCountTokens, projectPolicy, modelServed, respondTokenCount],
      closing,
    },
    models: {
      name: null,
      errors: openAiChat,
      meter: null,
      steps: [refuseWhileDraining, checkKey, authenticate, projectPolicy, respondModels],
      closing,
    },
    // Responses the gateway kept (responses/stored-steps.ts): no provider, no quota.
    retrieveResponse: stored(retrieveResponse),
    deleteResponse: stored(deleteResponse),
    listInputItems: stored(listInputItems),
    batches: batchEndpoints(closing),
    lines: {
      gateway: { '/v1/chat/completions': chatCompletions, '/v1/messages': messages, '/v1/responses': responses, '/v1/embeddings': embeddings },
      handOff: passOf('handOff'),
      collect: passOf('collect'),
    },
  };
}
