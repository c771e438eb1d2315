import type { Slot } from './run-guards.js';

type Obj = Record<string, unknown>;

function slot(holder: Obj, field: string): Slot {
  const s: Slot = {
    text: holder[field] as string,
    set(value) {
      s.text = value;
      holder[field] = value;
    },
  };
  return s;
}

/**
 * A content field's text: the string itself, or its text parts read as one text (images have
 * none), so a match split over two parts of one message ("fal" + "con") is one match. A masked
 * joined text goes into the first text part and the other text parts leave the message.
 */
function contentSlots(holder: Obj, field: string, out: Slot[]): void {
  const content = holder[field];
  if (typeof content === 'string') {
    out.push(slot(holder, field));
    return;
  }
  if (!Array.isArray(content)) return;
  const parts = (content as Obj[]).filter((part) => part !== null && typeof part === 'object' && typeof part.text === 'string');
  if (parts.length === 0) return;
  if (parts.length === 1) {
    out.push(slot(parts[0]!, 'text'));
    return;
  }
  const joined: Slot = {
    text: parts.map((part) => part.text as string).join(''),
    set(value) {
      joined.text = value;
      parts[0]!.text = value;
      const rest = new Set(parts.slice(1));
      holder[field] = (holder[field] as Obj[]).filter((part) => !rest.has(part));
    },
  };
  out.push(joined);
}

/** The arguments of each tool call a message carries (a model's earlier calls, replayed). */
function toolCallSlots(message: Obj, out: Slot[]): void {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return;
  for (const call of calls as Obj[]) {
    const fn = call?.function as Obj | undefined;
    if (fn !== undefined && fn !== null && typeof fn.arguments === 'string') out.push(slot(fn, 'arguments'));
  }
}

/**
 * Every text of a Chat Completions body's messages (the internal request of every endpoint): each
 * message's content (system prompts, tool results and the Responses input items converted into
 * messages included) and the arguments of the tool calls it carries.
 */
export function promptSlots(body: { messages: unknown[] }): Slot[] {
  const out: Slot[] = [];
  for (const message of body.messages as Obj[]) {
    if (message === null || typeof message !== 'object') continue;
    contentSlots(message, 'content', out);
    toolCallSlots(message, out);
  }
  return out;
}

/** The texts of an embeddings request: its input string, or each string of its list (token ids carry none). */
export function embeddingsSlots(body: { input: unknown }): Slot[] {
  const out: Slot[] = [];
  if (typeof body.input === 'string') out.push(slot(body as Obj, 'input'));
  else if (Array.isArray(body.input)) {
    const list = body.input as unknown[];
    for (let i = 0; i < list.length; i++) if (typeof list[i] === 'string') out.push(slot(list as unknown as Obj, String(i)));
  }
  return out;
}

/**
 * The answer's texts in a Chat Completions answer: each choice's message content, its reasoning
 * (`reasoning_content`, which a client shows as it shows the answer) and tool-call arguments.
 */
export function answerSlots(answer: { choices?: unknown[] }): Slot[] {
  const out: Slot[] = [];
  for (const choice of (answer.choices ?? []) as Obj[]) {
    const message = choice?.message as Obj | undefined;
    if (message === undefined || message === null) continue;
    if (typeof message.content === 'string') out.push(slot(message, 'content'));
    if (typeof message.reasoning_content === 'string') out.push(slot(message, 'reasoning_content'));
    toolCallSlots(message, out);
  }
  return out;
}
