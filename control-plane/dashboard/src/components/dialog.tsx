import type { ComponentChildren } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef } from 'preact/hooks';

/**
 * A modal on the native <dialog>: showModal() makes the rest of the page inert, moves focus
 * inside (to the element marked autofocus, else the first focusable one) and closes on Escape.
 * Focus goes back to whatever opened it; if that is gone (the row just deleted), to the page
 * heading, so keyboard users never land on <body>.
 */
export interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** "alertdialog" for confirmations of destructive actions. */
  role?: 'dialog' | 'alertdialog';
  describedBy?: string;
  /** Where focus goes on close instead of the opener (null: the opener). */
  restoreFocus?: () => HTMLElement | null;
}

export function Dialog({ open, title, onClose, children, role = 'dialog', describedBy, restoreFocus }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const restoreRef = useRef(restoreFocus);
  restoreRef.current = restoreFocus;
  const titleId = useId();

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const closed = () => {
      const back = restoreRef.current?.() ?? opener.current;
      opener.current = null;
      if (back !== null && back.isConnected && !back.hasAttribute('disabled')) back.focus();
      else document.querySelector<HTMLElement>('main h1')?.focus();
      onCloseRef.current();
    };
    dialog.addEventListener('close', closed);
    return () => dialog.removeEventListener('close', closed);
  }, []);

  return (
    <dialog ref={ref} class="dialog" role={role} aria-labelledby={titleId} aria-describedby={describedBy} aria-modal="true">
      {open && (
        <div class="dialog-body">
          <h2 id={titleId} class="dialog-title">
            {title}
          </h2>
          {children}
        </div>
      )}
    </dialog>
  );
}
