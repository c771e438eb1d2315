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

/** A content field's texts: the string itself, or each part's `text` (text parts; images have none). */
function contentSlots(holder: Obj, field: string, out: Slot[]): void {
  const content = holder[field];
  if (typeof content === 'string') out.push(slot(holder, field));
  else if (Array.isArray(content)) for (const part of content as Obj[]) if (part !== null && typeof part === 'object' && typeof part.text === 'string') out.push(slot(part, 'text'));
}

/** Every text of a Chat Completions body's messages (the internal request of every endpoint). */
export function promptSlots(body: { messages: unknown[] }): Slot[] {
  const out: Slot[] = [];
  for (const message of body.messages as Obj[]) if (message !== null && typeof message === 'object') contentSlots(message, 'content', out);
  return out;
}

/** The answer's texts in a Chat Completions answer (each choice's message content). */
export function answerSlots(answer: { choices?: unknown[] }): Slot[] {
  const out: Slot[] = [];
  for (const choice of (answer.choices ?? []) as Obj[]) {
    const message = choice?.message as Obj | undefined;
    if (message !== undefined && message !== null && typeof message.content === 'string') out.push(slot(message, 'content'));
  }
  return out;
}
