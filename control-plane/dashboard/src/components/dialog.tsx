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
  /** Asked when Escape would close the dialog; false keeps it open (to ask the user first). */
  onCloseRequest?: () => boolean;
}

export function Dialog({ open, title, onClose, children, role = 'dialog', describedBy, restoreFocus, onCloseRequest }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const restoreRef = useRef(restoreFocus);
  restoreRef.current = restoreFocus;
  const closeRequestRef = useRef(onCloseRequest);
  closeRequestRef.current = onCloseRequest;
  const titleId = useId();

  // Escape is answered on keydown, whose default (the close request) is then withheld; the cancel
  // event covers other close requests and browsers that send one anyway, with the same answer.
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    let answered: boolean | null = null;
    const keydown = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || closeRequestRef.current === undefined) return;
      answered = closeRequestRef.current();
      if (!answered) event.preventDefault();
      setTimeout(() => (answered = null));
    };
    const cancel = (event: Event) => {
      if (closeRequestRef.current === undefined) return;
      const allowed = answered ?? closeRequestRef.current();
      answered = null;
      if (!allowed) event.preventDefault();
    };
    dialog.addEventListener('keydown', keydown);
    dialog.addEventListener('cancel', cancel);
    return () => {
      dialog.removeEventListener('keydown', keydown);
      dialog.removeEventListener('cancel', cancel);
    };
  }, []);

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
