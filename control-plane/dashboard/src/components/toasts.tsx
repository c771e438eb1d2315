import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useRef, useState } from 'preact/hooks';

/**
 * Confirmations of finished actions ("Key deleted"). The live region is always in the page, so
 * screen readers announce each message as it is added; messages leave after a while but can be
 * dismissed sooner.
 */
interface Toast {
  id: number;
  text: string;
}

type Notify = (text: string) => void;

const ToastContext = createContext<Notify>(() => {});

const VISIBLE_MS = 6_000;

export function ToastProvider({ children }: { children: ComponentChildren }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((t) => t.id !== id)), []);
  const notify = useCallback<Notify>(
    (text) => {
      const id = next.current++;
      // A few at most: a burst of actions must not bury the page under confirmations.
      setToasts((all) => [...all.slice(-2), { id, text }]);
      window.setTimeout(() => dismiss(id), VISIBLE_MS);
    },
    [dismiss],
  );
  return (
    <ToastContext.Provider value={notify}>
      {children}
      <div class="toasts" role="status" aria-live="polite">
        {toasts.map((toast) => (
          <div class="toast" key={toast.id}>
            <span aria-hidden="true">✓</span>
            <span class="toast-text">{toast.text}</span>
            <button type="button" class="toast-close" onClick={() => dismiss(toast.id)} aria-label="Dismiss message">
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToasts(): Notify {
  return useContext(ToastContext);
}
