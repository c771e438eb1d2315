import type { ComponentChildren } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef } from 'preact/hooks';

/**
 * A details panel: a modal <dialog> along the right edge on a wide screen, the whole screen on a
 * phone (record-views.css). As a modal it keeps focus inside, closes on Escape, and gives focus
 * back to the control that opened it.
 */
export function SideSheet({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const titleId = useId();

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    } else if (!open && dialog.open) dialog.close();
  }, [open]);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const closed = () => {
      const back = opener.current;
      opener.current = null;
      if (back !== null && back.isConnected) back.focus();
      onCloseRef.current();
    };
    // A click on the backdrop lands on the dialog itself, outside its body: that closes it too.
    const clicked = (event: MouseEvent) => {
      if (event.target === dialog) dialog.close();
    };
    dialog.addEventListener('close', closed);
    dialog.addEventListener('click', clicked);
    return () => {
      dialog.removeEventListener('close', closed);
      dialog.removeEventListener('click', clicked);
    };
  }, []);

  return (
    <dialog ref={ref} class="sheet" aria-labelledby={titleId}>
      {open && (
        <>
          <div class="sheet-header">
            <h2 id={titleId}>{title}</h2>
            <button type="button" onClick={() => ref.current?.close()}>
              Close
            </button>
          </div>
          <div class="sheet-body">{children}</div>
        </>
      )}
    </dialog>
  );
}
