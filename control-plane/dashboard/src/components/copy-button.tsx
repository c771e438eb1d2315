import { useEffect, useRef, useState } from 'preact/hooks';
import { copyText } from '../lib/clipboard.js';

/**
 * Copies a value and says so next to the button, in words (a polite status, so screen readers
 * hear it too). `field` is selected instead when the clipboard is out of reach.
 */
export function CopyButton({ text, label, field, class: className }: { text: string; label: string; field?: () => HTMLInputElement | null; class?: string }) {
  const [state, setState] = useState<'copied' | 'failed' | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current !== null && clearTimeout(timer.current)), []);
  const copy = async () => {
    const ok = await copyText(text, field?.() ?? null);
    setState(ok ? 'copied' : 'failed');
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => setState(null), 4000);
  };
  return (
    <span class={`copy-button ${className ?? ''}`}>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span class="copy-status small" role="status">
        {state === 'copied' && '✓ Copied'}
        {state === 'failed' && '✕ Copy failed: select the text and copy it'}
      </span>
    </span>
  );
}
