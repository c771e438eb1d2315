import { useRef, useState } from 'preact/hooks';
import type { NewApiKey } from '../api/types.js';
import { Dialog } from '../components/dialog.js';
import { copyText } from '../lib/clipboard.js';

/**
 * The one time a key's secret is on screen. It lives in the parent's state only while this
 * dialog is open; closing drops it, and nothing writes it to storage, the URL or a log.
 */
export function NewKeyDialog({ created, onClose }: { created: NewApiKey | null; onClose: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  const close = () => {
    setCopied(null);
    onClose();
  };

  const copy = async () => {
    if (created === null) return;
    setCopied((await copyText(created.key, field.current)) ? 'yes' : 'failed');
  };

  return (
    <Dialog open={created !== null} title="Copy your new API key" onClose={close} describedBy="new-key-warning">
      <div class="banner banner-warning" id="new-key-warning">
        <span class="banner-icon" aria-hidden="true">
          ⚠
        </span>
        <span>
          <strong>This is the only time this key is shown.</strong> The gateway keeps only a hash of it and cannot show it again. Store it in your secret
          manager now; if it is lost, delete it and create another.
        </span>
      </div>
      <div class="field">
        <label for="new-key-secret">API key “{created?.name}”</label>
        <div class="secret-row">
          <input
            id="new-key-secret"
            ref={field}
            class="secret"
            readOnly
            value={created?.key ?? ''}
            autocomplete="off"
            spellcheck={false}
            data-secret="api-key"
            onFocus={(e) => e.currentTarget.select()}
          />
          <button type="button" onClick={copy} autofocus>
            Copy key
          </button>
        </div>
        <p class="hint" role="status">
          {copied === 'yes' && '✓ Copied to the clipboard.'}
          {copied === 'failed' && 'Copying failed: the key is selected, copy it with Ctrl+C (⌘C on a Mac).'}
        </p>
      </div>
      <p class="small">
        Clients send it to the gateway as the <code>x-api-key</code> header (or <code>Authorization: Bearer …</code>).
      </p>
      <div class="dialog-actions">
        <button type="button" class="button-primary" onClick={close}>
          I have stored the key
        </button>
      </div>
    </Dialog>
  );
}
