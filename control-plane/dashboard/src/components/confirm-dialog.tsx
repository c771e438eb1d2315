import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import { Dialog } from './dialog.js';
import { ErrorBanner } from './error-banner.js';

/**
 * "Are you sure?" for destructive actions. Focus starts on Cancel, so an Enter pressed out of
 * habit does not delete anything; a refusal from the API stays in the dialog, next to the choice.
 * After a deletion the button that opened the dialog is about to vanish with its row, so focus
 * goes to the page heading; after Cancel it goes back to that button.
 */
export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

export function ConfirmDialog({ open, title, children, confirmLabel, onConfirm, onClose }: ConfirmDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const descriptionId = useId();
  const confirmed = useRef(false);

  const close = () => {
    setError(null);
    setBusy(false);
    onClose();
  };
  const confirm = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      confirmed.current = true;
      close();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={open}
      title={title}
      onClose={close}
      role="alertdialog"
      describedBy={descriptionId}
      restoreFocus={() => {
        const done = confirmed.current;
        confirmed.current = false;
        return done ? document.querySelector<HTMLElement>('main h1') : null;
      }}
    >
      <div id={descriptionId}>{children}</div>
      <ErrorBanner error={error} />
      <div class="dialog-actions">
        <button type="button" onClick={close} autofocus>
          Cancel
        </button>
        <button type="button" class="button-danger" onClick={confirm} aria-disabled={busy} aria-busy={busy}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
