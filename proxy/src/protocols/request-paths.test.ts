import { describe, expect, it } from 'vitest';
import { REQUEST_PATHS } from './request-paths.js';

describe('the request paths the translation bench measures', () => {
  const messages = Buffer.from('{"model":"m","max_tokens":9,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"x_new":1}');

  it("sends a native body as the client's bytes with the provider's model id", () => {
    expect(REQUEST_PATHS.messages.native(messages, 'up').toString()).toBe(messages.toString().replace('"m"', '"up"'));
  });

  it('sends a translated body as the internal request, serialised for an OpenAI-compatible provider', () => {
    const sent = JSON.parse(REQUEST_PATHS.messages.translated(messages, 'up').toString());
    expect(sent).toMatchObject({ model: 'up', max_tokens: 9, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] });
    expect(sent).not.toHaveProperty('x_new');
    const responses = Buffer.from('{"model":"m","instructions":"Be brief.","input":"hi","store":false}');
    expect(JSON.parse(REQUEST_PATHS.responses.translated(responses, 'up').toString())).toMatchObject({ model: 'up', messages: [{ role: 'system' }, { role: 'user', content: 'hi' }] });
    expect(REQUEST_PATHS.responses.native(responses, 'up').toString()).toBe(responses.toString().replace('"m"', '"up"'));
  });
});
