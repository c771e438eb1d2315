/**
 * Ready-to-paste client code for a new key, with the gateway's public address and a model the
 * project may use. The secret itself is not written into them: it is read from GATEWAY_API_KEY,
 * so a pasted snippet that ends up in a repository or a chat carries no key.
 */
export const KEY_VARIABLE = 'GATEWAY_API_KEY';

export interface ClientSnippet {
  id: 'curl' | 'python' | 'node' | 'anthropic';
  label: string;
  code: string;
}

export function clientSnippets(gatewayUrl: string, model: string): ClientSnippet[] {
  const base = gatewayUrl.replace(/\/+$/, '');
  const m = JSON.stringify(model);
  const mq = `'${model.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return [
    {
      id: 'curl',
      label: 'curl',
      code: [
        `curl ${base}/v1/chat/completions \\`,
        `  -H "x-api-key: $${KEY_VARIABLE}" \\`,
        `  -H 'content-type: application/json' \\`,
        `  -d '${JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }).replace(/'/g, "'\\''")}'`,
      ].join('\n'),
    },
    {
      id: 'python',
      label: 'Python · OpenAI',
      code: [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${base}/v1", api_key=os.environ["${KEY_VARIABLE}"])`,
        `reply = client.chat.completions.create(model=${m}, messages=[{"role": "user", "content": "Hello"}])`,
        'print(reply.choices[0].message.content)',
      ].join('\n'),
    },
    {
      id: 'node',
      label: 'Node · OpenAI',
      code: [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${base}/v1', apiKey: process.env.${KEY_VARIABLE} });`,
        `const reply = await client.chat.completions.create({ model: ${mq}, messages: [{ role: 'user', content: 'Hello' }] });`,
        'console.log(reply.choices[0].message.content);',
      ].join('\n'),
    },
    {
      id: 'anthropic',
      label: 'Node · Anthropic',
      code: [
        "import Anthropic from '@anthropic-ai/sdk';",
        '',
        `const client = new Anthropic({ baseURL: '${base}', apiKey: process.env.${KEY_VARIABLE} });`,
        `const message = await client.messages.create({ model: ${mq}, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });`,
        "console.log(message.content[0].type === 'text' ? message.content[0].text : message.content);",
      ].join('\n'),
    },
  ];
}
