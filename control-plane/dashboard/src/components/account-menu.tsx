import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { User } from '../api/types.js';
import { PasswordDialog } from './password-dialog.js';

/**
 * "My account" in the header: who is signed in, with which account role, and changing the
 * password. A disclosure (a button that shows and hides a panel) rather than an ARIA menu: its
 * contents are a few plain lines and buttons, read and reached with Tab like the rest of the page.
 * Escape or a click elsewhere closes it, and Escape puts focus back on the button.
 */
export function AccountMenu({ user }: { user: User }) {
  const [open, setOpen] = useState(false);
  const [changing, setChanging] = useState(false);
  const panelId = useId();
  const root = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);

  // Before the open menu is painted: an Escape or a click as soon as it shows is never missed.
  useLayoutEffect(() => {
    if (!open) return;
    const outside = (event: Event) => {
      if (root.current !== null && !root.current.contains(event.target as Node)) setOpen(false);
    };
    const escape = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('focusin', outside);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('focusin', outside);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);

  return (
    <div class="account-menu" ref={root}>
      <button type="button" ref={toggle} class="account-toggle" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen(!open)}>
        <span class="visually-hidden">My account: {user.email}</span>
        <span class="account-email" aria-hidden="true">
          {user.email}
        </span>
        <span class="account-short" aria-hidden="true">
          Account
        </span>
        <span class="account-caret" aria-hidden="true">
          ▾
        </span>
      </button>
      <div id={panelId} class="account-panel" hidden={!open}>
        <p class="account-who">
          <span class="muted small">Signed in as</span>
          <strong class="wrap-anywhere">{user.email}</strong>
          <span>
            <span class={`role role-${user.role}`}>{user.role === 'admin' ? 'account admin' : 'account member'}</span>
          </span>
        </p>
        <button
          type="button"
          onClick={() => {
            setOpen(false);
            setChanging(true);
          }}
        >
          Change password
        </button>
      </div>
      <PasswordDialog open={changing} email={user.email} onClose={() => setChanging(false)} />
    </div>
  );
}
