import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/api-error.js';
import type { NewApiKey, Project } from '../api/types.js';
import { Dialog } from '../components/dialog.js';
import { copyText } from '../lib/clipboard.js';
import { formatDateTime } from '../lib/format.js';
import { allowListState } from '../lib/project-list.js';
import { useGatewayInfo, useServedModels } from '../lib/use-gateway.js';
import { ClientSnippets } from './client-snippets.js';

/**
 * The one time a key's secret is on screen. It lives in the parent's state only while this
 * dialog is open; closing drops it, and nothing writes it to storage, the URL or a log. Escape
 * and the ✕ button ask first ("you will not see this key again"); only "I have stored the key"
 * closes at once. Below it, client examples with the gateway's address and a model the project
 * may use.
 */
export function NewKeyDialog({ created, project, onClose }: { created: NewApiKey | null; project: Project | null; onClose: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const back = useRef<HTMLButtonElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const gateway = useGatewayInfo();
  const served = useServedModels();

  const copyButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  // The question takes focus on its safe answer; when it goes, focus returns to the key's button
  // rather than falling to the page behind the dialog.
  useEffect(() => {
    if (confirming) back.current?.focus();
    else if (asked.current) copyButton.current?.focus();
    asked.current = confirming;
  }, [confirming]);

  const close = () => {
    setCopied(null);
    setConfirming(false);
    onClose();
  };

  const copy = async () => {
    if (created === null) return;
    setCopied((await copyText(created.key, field.current)) ? 'yes' : 'failed');
  };

  const allowed = allowListState(project?.allowed_models, served.data);
  const model = allowed.kind === 'some' ? allowed.served[0] : served.data?.[0]?.id;

  return (
    <Dialog
      open={created !== null}
      title="Copy your new API key"
      onClose={close}
      describedBy="new-key-warning"
      onCloseRequest={() => {
        // Escape on the question goes back to the key; Escape on the key asks the question.
        setConfirming((asking) => !asking);
        return false;
      }}
    >
      <div class="new-key">
        <button type="button" class="dialog-close" aria-label="Close" onClick={() => setConfirming(true)}>
          <span aria-hidden="true">✕</span>
        </button>
        <div class="banner banner-warning" id="new-key-warning">
          <span class="banner-icon" aria-hidden="true">
            ⚠
          </span>
          <span>
            <strong>This is the only time this key is shown.</strong> The gateway keeps only a hash of it and cannot show it again. Store it in your
            secret manager now; if it is lost, delete it and create another.
          </span>
        </div>
        <div class="field">
          <label for="new-key-secret">API key “{created?.name}”</label>
          <div class="secret-row new-key-secret-row">
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
            <button type="button" ref={copyButton} onClick={copy} autofocus>
              Copy key
            </button>
          </div>
          <p class="hint" role="status">
            {copied === 'yes' && '✓ Copied to the clipboard.'}
            {copied === 'failed' && 'Copying failed: the key is selected, copy it with Ctrl+C (⌘C on a Mac).'}
          </p>
          <p class="hint">{created?.expires_at ? `Expires ${formatDateTime(created.expires_at)}.` : 'Never expires.'}</p>
        </div>
        <p class="small">
          Clients send it to the gateway as the <code>x-api-key</code> header (or <code>Authorization: Bearer …</code>).
        </p>
        {allowed.kind === 'none' && (
          <p class="project-warning" role="note">
            <span aria-hidden="true">⊘ </span>
            <strong>This project allows no model</strong>, so the gateway refuses every request with this key until the project's allow-list is
            changed (Projects → Settings).
          </p>
        )}
        {gateway.data !== undefined && model !== undefined && <ClientSnippets gatewayUrl={gateway.data.public_url} model={model} />}
        {gateway.error !== null && gateway.data === undefined && (
          <p class="small muted">Client examples are not available: the gateway's address could not be read ({describeError(gateway.error)}).</p>
        )}
        {confirming ? (
          <div class="banner banner-warning close-question" role="alert">
            <span class="banner-icon" aria-hidden="true">
              ⚠
            </span>
            <div>
              <p>
                <strong>You will not see this key again.</strong> Close only once it is stored.
              </p>
              <div class="dialog-actions">
                <button type="button" ref={back} onClick={() => setConfirming(false)}>
                  Back to the key
                </button>
                <button type="button" class="button-danger" onClick={close}>
                  Close, the key is stored
                </button>
              </div>
            </div>
          </div>
        ) : (
          <div class="dialog-actions">
            <button type="button" class="button-primary" onClick={close}>
              I have stored the key
            </button>
          </div>
        )}
      </div>
    </Dialog>
  );
}
