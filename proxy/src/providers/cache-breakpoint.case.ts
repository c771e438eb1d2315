/**
 * The request every prompt-caching adapter test starts from: a user turn whose text, image and
 * file parts carry breakpoints (the image's with a one-hour ttl) and whose last text does not, and
 * one marked tool. Each adapter's test checks where its own wire format puts them.
 */
export const EPHEMERAL = { type: 'ephemeral' } as const;

export function markedRequest(imageUrl: string): Record<string, unknown> {
  const pdf = `data:application/pdf;base64,${Buffer.from('%PDF').toString('base64')}`;
  return {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a', cache_control: EPHEMERAL },
          { type: 'image_url', image_url: { url: imageUrl }, cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'file', file: { file_data: pdf, filename: 'doc.pdf' }, cache_control: EPHEMERAL },
          { type: 'text', text: 'b' },
        ],
      },
    ],
    tools: [
      { type: 'function', function: { name: 't1' }, cache_control: EPHEMERAL },
      { type: 'function', function: { name: 't2' } },
    ],
  };
}
