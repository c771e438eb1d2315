import { useState } from 'preact/hooks';
import { CopyButton } from '../components/copy-button.js';
import { clientSnippets, KEY_VARIABLE } from '../lib/client-snippets.js';

/**
 * Client code to paste, one tab per client (curl, the OpenAI SDKs for Python and Node, the
 * Anthropic SDK on /v1/messages), each with its own copy button. Tabs follow the ARIA pattern:
 * arrow keys move between them.
 */
export function ClientSnippets({ gatewayUrl, model }: { gatewayUrl: string; model: string }) {
  const snippets = clientSnippets(gatewayUrl, model);
  const [active, setActive] = useState(0);
  const current = snippets[active] ?? snippets[0]!;

  const onKeyDown = (event: KeyboardEvent) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    const next = (active + step + snippets.length) % snippets.length;
    setActive(next);
    (event.currentTarget as HTMLElement).parentElement?.querySelectorAll<HTMLElement>('[role="tab"]')[next]?.focus();
  };

  return (
    <section class="snippets" aria-labelledby="snippets-heading">
      <h3 id="snippets-heading">Use it</h3>
      <p class="small">
        Put the key in the <code>{KEY_VARIABLE}</code> environment variable, then use the OpenAI API (<code>/v1/chat/completions</code>) or the
        Anthropic API (<code>/v1/messages</code>) with any of their SDKs:
      </p>
      <div role="tablist" aria-label="Client" class="snippet-tabs">
        {snippets.map((s, i) => (
          <button
            key={s.id}
            type="button"
            role="tab"
            id={`snippet-tab-${s.id}`}
            aria-selected={i === active}
            aria-controls="snippet-panel"
            tabIndex={i === active ? 0 : -1}
            onClick={() => setActive(i)}
            onKeyDown={onKeyDown}
          >
            {s.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="snippet-panel" aria-labelledby={`snippet-tab-${current.id}`} class="snippet-panel">
        <pre tabIndex={0} aria-label={`${current.label} example`}>
          <code data-snippet={current.id}>{current.code}</code>
        </pre>
        <CopyButton text={current.code} label="Copy example" />
      </div>
    </section>
  );
}
