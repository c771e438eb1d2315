import { describe, expect, it } from 'vitest';
import { carryPromptFilters } from './prompt-filter-carry.js';

const PROMPT = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] };
const ROLE = { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, content_filter_results: {} }] };

describe('carryPromptFilters', () => {
  it("holds Azure's opening chunk back and puts its prompt_filter_results, untouched, on the next chunk with choices", () => {
    const rewrite = carryPromptFilters();
    expect(rewrite(JSON.stringify(PROMPT))).toBeNull();
    expect(JSON.parse(rewrite(JSON.stringify(ROLE)) as string)).toEqual({ ...ROLE, prompt_filter_results: PROMPT.prompt_filter_results });
    const next = JSON.stringify({ ...ROLE, choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] });
    expect(rewrite(next)).toBe(next);
  });

  it('leaves every other chunk as sent: usage chunks, error events, chunks that already have choices', () => {
    const rewrite = carryPromptFilters();
    const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 }, prompt_filter_results: [] });
    expect(rewrite(usage)).toBe(usage);
    const withChoices = JSON.stringify({ ...ROLE, prompt_filter_results: PROMPT.prompt_filter_results });
    expect(rewrite(withChoices)).toBe(withChoices);
    expect(rewrite(JSON.stringify(PROMPT))).toBeNull();
    const error = JSON.stringify({ error: { message: 'boom' } });
    expect(rewrite(error)).toBe(error);
    expect(JSON.parse(rewrite(JSON.stringify(ROLE)) as string).prompt_filter_results).toEqual(PROMPT.prompt_filter_results);
  });
});
