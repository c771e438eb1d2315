import { Errors } from '@gateway/shared';
import { Masker } from '@gateway/shared/guardrails';
import type { RequestContext } from '../pipeline/context.js';
import type { StreamResult } from '../request/internal-request.js';
import { runGuards, type Slot } from './run-guards.js';
import type { CompiledGuards, GuardrailRuntime } from './runtime.js';

/**
 * The output guardrails over a Chat Completions stream. Every text the stream carries is read as
 * its own track: each choice's content (so `n` > 1 choices are judged apart, never as one mixed
 * text), its refusal, its reasoning (`reasoning_content`), and the arguments of each of its tool
 * calls. A provider's thinking block (`thinking_blocks`) repeats its reasoning unmasked: once a
 * mask has changed a choice's reasoning, its blocks are withheld. A chunk is released only once
 * every track it carries text for has `window` characters after that text, or has ended (its
 * choice finished), so a match up to the window's length split across chunks is seen whole before
 * any of it leaves; chunks leave in the order they came. A block ends the stream with
 * `finish_reason: "content_filter"` for every choice, what was held never sent; a mask rewrites the
 * held text of its track. A clean stream's chunks pass as they came.
 */
type Obj = Record<string, unknown>;

interface Piece {
  track: string;
  /** The choice it belongs to (its track ends when that choice finishes). */
  choice: number;
  text: string;
  /** Where the text lives in the chunk, so a mask can rewrite it. */
  holder: Obj;
  field: string;
}

interface Held {
  data: string;
  chunk: Obj | null;
  pieces: Piece[];
  rewritten: boolean;
}

interface Track {
  /** Text of this track in held chunks. */
  held: string;
  /** The end of what was released, as long as the window: a match reaching into it started there. */
  tail: string;
}

const TEXT_FIELDS = ['content', 'refusal', 'reasoning_content'] as const;

/** Takes the thinking blocks out of the chunk's deltas for the choices whose reasoning a mask changed; whether it did. */
function withholdThinking(chunk: Obj | null, masked: ReadonlySet<string>): boolean {
  const choices = chunk?.choices;
  if (masked.size === 0 || !Array.isArray(choices)) return false;
  let changed = false;
  for (let position = 0; position < choices.length; position++) {
    const choice = choices[position] as Obj | null;
    const delta = choice?.delta as Obj | undefined;
    if (typeof delta !== 'object' || delta === null || delta.thinking_blocks === undefined) continue;
    const index = typeof choice?.index === 'number' ? choice.index : position;
    if (!masked.has(`${index}:reasoning_content`)) continue;
    delete delta.thinking_blocks;
    changed = true;
  }
  return changed;
}

/** The reasoning tracks a chunk ends: its choice's thinking block came whole, or its answer began. */
function reasoningEnded(chunk: Obj | null, pieces: readonly Piece[]): string[] {
  const out: string[] = [];
  for (const piece of pieces) if (!piece.track.endsWith(':reasoning_content')) out.push(`${piece.choice}:reasoning_content`);
  const choices = chunk?.choices;
  if (!Array.isArray(choices)) return out;
  for (let position = 0; position < choices.length; position++) {
    const choice = choices[position] as Obj | null;
    const delta = choice?.delta as Obj | undefined;
    if (typeof delta === 'object' && delta !== null && delta.thinking_blocks !== undefined) out.push(`${typeof choice?.index === 'number' ? choice.index : position}:reasoning_content`);
  }
  return out;
}

/** What a chunk carries: its pieces of text, the choices it finishes, the choices it names. */
function read(chunk: Obj | null, choicesSeen: Set<number>): { pieces: Piece[]; finished: number[] } {
  const pieces: Piece[] = [];
  const finished: number[] = [];
  const choices = chunk?.choices;
  if (!Array.isArray(choices)) return { pieces, finished };
  for (let position = 0; position < choices.length; position++) {
    const choice = choices[position] as Obj | null;
    if (typeof choice !== 'object' || choice === null) continue;
    const index = typeof choice.index === 'number' ? choice.index : position;
    choicesSeen.add(index);
    const delta = choice.delta as Obj | undefined;
    if (typeof delta === 'object' && delta !== null) {
      for (const field of TEXT_FIELDS) {
        const text = delta[field];
        if (typeof text === 'string' && text !== '') pieces.push({ track: `${index}:${field}`, choice: index, text, holder: delta, field });
      }
      const calls = delta.tool_calls;
      if (Array.isArray(calls)) {
        for (let k = 0; k < calls.length; k++) {
          const call = calls[k] as Obj | null;
          const fn = call?.function as Obj | undefined;
          const args = fn?.arguments;
          if (typeof args !== 'string' || args === '') continue;
          const callIndex = typeof call?.index === 'number' ? call.index : k;
          pieces.push({ track: `${index}:call:${callIndex}`, choice: index, text: args, holder: fn!, field: 'arguments' });
        }
      }
    }
    if (typeof choice.finish_reason === 'string') finished.push(index);
  }
  return { pieces, finished };
}

export async function* guardStream(ctx: RequestContext, runtime: GuardrailRuntime, compiled: CompiledGuards, result: StreamResult, source: AsyncIterable<string>): AsyncGenerator<string> {
  const held: Held[] = [];
  const tracks = new Map<string, Track>();
  const choicesSeen = new Set<number>();
  const endedChoices = new Set<number>();
  /** Reasoning tracks whose text is over (the block came, or the answer began): they wait for no window. */
  const endedTracks = new Set<string>();
  let reasoningSeen = false;
  let last: Obj | null = null;
  const masker = new Masker();
  /** Tracks a mask has changed. */
  const masked = new Set<string>();
  const window = compiled.window;
  const tailBound = Math.min(window, 1 << 16);

  const trackOf = (name: string): Track => {
    let track = tracks.get(name);
    if (track === undefined) {
      track = { held: '', tail: '' };
      tracks.set(name, track);
    }
    return track;
  };

  /** Checks one track's held text (with its released tail before it); false when the stream is blocked. */
  const check = async (name: string, track: Track): Promise<boolean> => {
    const slot: Slot = {
      text: track.tail + track.held,
      set(value) {
        slot.text = value;
      },
    };
    const whole = slot.text;
    let outcome = runGuards(ctx, runtime, compiled.output, [slot], 'output', masker);
    if (outcome instanceof Promise) outcome = await outcome;
    if (outcome?.kind === 'unavailable') throw Errors.guardrailUnavailable(outcome.id);
    if (outcome?.kind === 'block') return false;
    if (slot.text !== whole && slot.text.startsWith(track.tail)) {
      // Masked: the track's held text, masked, travels in its first held piece.
      const maskedText = slot.text.slice(track.tail.length);
      let first = true;
      for (const h of held) {
        for (const piece of h.pieces) {
          if (piece.track !== name) continue;
          piece.text = first ? maskedText : '';
          piece.holder[piece.field] = piece.text;
          h.rewritten = true;
          first = false;
        }
      }
      track.held = maskedText;
      masked.add(name);
    }
    return true;
  };

  const blocked = function* (): Generator<string> {
    result.meta.finishReason = 'content_filter';
    const indexes = choicesSeen.size === 0 ? [0] : [...choicesSeen].sort((a, b) => a - b);
    yield JSON.stringify({ ...(last ?? {}), choices: indexes.map((index) => ({ index, delta: {}, finish_reason: 'content_filter' })), usage: undefined });
  };

  /** The head chunk may leave: each of its tracks has a window of text after it, or has ended. */
  const releasable = (h: Held): boolean => {
    for (const piece of h.pieces) {
      const track = tracks.get(piece.track)!;
      // Its choice finished: no more text will come, so nothing of it waits for a window.
      if (endedChoices.has(piece.choice)) continue;
      let own = 0;
      for (const p of h.pieces) if (p.track === piece.track) own += p.text.length;
      if (track.held.length - own < window && !endedTracks.has(piece.track)) return false;
    }
    return true;
  };

  const release = (h: Held): string => {
    for (const piece of h.pieces) {
      const track = tracks.get(piece.track)!;
      track.held = track.held.slice(piece.text.length);
      track.tail = (track.tail + piece.text).slice(-tailBound);
    }
    if (withholdThinking(h.chunk, masked)) h.rewritten = true;
    return h.rewritten ? JSON.stringify(h.chunk) : h.data;
  };

  for await (const data of source) {
    let chunk: Obj | null = null;
    try {
      const parsed: unknown = JSON.parse(data);
      chunk = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Obj) : null;
    } catch {
      chunk = null;
    }
    if (chunk !== null) last = chunk;
    const { pieces, finished } = read(chunk, choicesSeen);
    for (const index of finished) endedChoices.add(index);
    // Reasoning again after the answer began (interleaved thinking) waits for its window again.
    if (endedTracks.size > 0) for (const piece of pieces) endedTracks.delete(piece.track);
    // A stream with no reasoning (most) pays nothing more per chunk.
    if (reasoningSeen || (reasoningSeen = pieces.some((piece) => piece.field === 'reasoning_content'))) for (const name of reasoningEnded(chunk, pieces)) endedTracks.add(name);
    if (pieces.length === 0 && held.length === 0) {
      yield withholdThinking(chunk, masked) ? JSON.stringify(chunk) : data;
      continue;
    }
    held.push({ data, chunk, pieces, rewritten: false });
    const touched = new Set<string>();
    for (const piece of pieces) {
      const track = trackOf(piece.track);
      track.held += piece.text;
      touched.add(piece.track);
    }
    // With a remote guard the whole stream is held and checked once, at its end: a webhook or
    // moderation call per chunk would ask the same question again with every chunk.
    if (window === Infinity) continue;
    for (const name of touched) {
      if (!(await check(name, tracks.get(name)!))) {
        yield* blocked();
        return;
      }
    }
    while (held.length > 0 && releasable(held[0]!)) yield release(held.shift()!);
  }
  if (window === Infinity) {
    for (const [name, track] of tracks) {
      if (track.held !== '' && !(await check(name, track))) {
        yield* blocked();
        return;
      }
    }
  }
  for (const h of held) yield release(h);
}
