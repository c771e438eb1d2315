import { useRef, useState } from 'preact/hooks';
import type { NewWebhook } from '../api/types.js';
import { Dialog } from '../components/dialog.js';
import { copyText } from '../lib/clipboard.js';

/**
 * The one time a webhook's signing secret is on screen, as NewKeyDialog does for keys: it lives
 * in the parent's state only while this dialog is open; closing drops it, and nothing writes it
 * to storage, the URL or a log.
 */
export function NewWebhookDialog({ created, onClose }: { created: NewWebhook | null; onClose: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  const close = () => {
    setCopied(null);
    onClose();
  };

  const copy = async () => {
    if (created === null) return;
    setCopied((await copyText(created.secret, field.current)) ? 'yes' : 'failed');
  };

  return (
    <Dialog open={created !== null} title="Copy the webhook's signing secret" onClose={close} describedBy="new-webhook-warning">
      <div class="banner banner-warning" id="new-webhook-warning">
        <span class="banner-icon" aria-hidden="true">
          ⚠
        </span>
        <span>
          <strong>This is the only time this secret is shown.</strong> The gateway never lists it again. Store it where your endpoint reads it now; if it
          is lost, delete the webhook and create another.
        </span>
      </div>
      <p class="small wrap-anywhere">
        Webhook to <code>{created?.url}</code>
      </p>
      <div class="field">
        <label for="created-webhook-secret">Signing secret</label>
        <div class="secret-row new-webhook-secret-row">
          <input
            id="created-webhook-secret"
            ref={field}
            class="secret"
            readOnly
            value={created?.secret ?? ''}
            autocomplete="off"
            spellcheck={false}
            data-secret="webhook-secret"
            onFocus={(e) => e.currentTarget.select()}
          />
          <button type="button" onClick={copy} autofocus>
            Copy secret
          </button>
        </div>
        <p class="hint" role="status">
          {copied === 'yes' && '✓ Copied to the clipboard.'}
          {copied === 'failed' && 'Copying failed: the secret is selected, copy it with Ctrl+C (⌘C on a Mac).'}
        </p>
      </div>
      <p class="small">
        Your endpoint checks each delivery's <code>webhook-signature</code> header with it: an HMAC-SHA256 keyed with the base64 after <code>whsec_</code>,
        decoded, as Standard Webhooks describes.
      </p>
      <div class="dialog-actions">
        <button type="button" class="button-primary" onClick={close}>
          I have stored the secret
        </button>
      </div>
    </Dialog>
  );
}
