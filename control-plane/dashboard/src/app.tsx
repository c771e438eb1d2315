import type { FunctionComponent } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { SessionProvider, useSession, useSessionState, useUser } from './auth/session-context.js';
import { AccountMenu } from './components/account-menu.js';
import { PageHeading } from './components/page-heading.js';
import { ProjectsProvider } from './components/projects-context.js';
import { ToastProvider } from './components/toasts.js';
import { href, Link, navigate, useLocation } from './lib/router.js';
import { AccountsPage } from './pages/accounts-page.js';
import { AuditPage } from './pages/audit-page.js';
import { BatchesPage } from './pages/batches-page.js';
import { GuardrailsPage } from './pages/guardrails-page.js';
import { KeysPage } from './pages/keys-page.js';
import { MembersPage } from './pages/members-page.js';
import { ProjectsPage } from './pages/projects-page.js';
import { SigninPage } from './pages/signin-page.js';
import { UsagePage } from './pages/usage-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';

/**
 * The pages, in navigation order. The server answers any of these addresses with index.html.
 * `adminOnly` pages are left out of the navigation for accounts that are not account admins.
 */
const PAGES: readonly { path: string; label: string; Page: FunctionComponent; adminOnly?: boolean }[] = [
  { path: '/projects', label: 'Projects', Page: ProjectsPage },
  { path: '/keys', label: 'API keys', Page: KeysPage },
  { path: '/webhooks', label: 'Webhooks', Page: WebhooksPage },
  { path: '/guardrails', label: 'Guardrails', Page: GuardrailsPage },
  { path: '/usage', label: 'Usage', Page: UsagePage },
  { path: '/batches', label: 'Batches', Page: BatchesPage },
  { path: '/audit', label: 'Audit', Page: AuditPage },
  { path: '/members', label: 'Members', Page: MembersPage },
  { path: '/accounts', label: 'Accounts', Page: AccountsPage, adminOnly: true },
];

export function App() {
  return (
    <SessionProvider>
      <ToastProvider>
        <Gate />
      </ToastProvider>
    </SessionProvider>
  );
}

/** Signed out: the sign-in page at whatever address was asked for, which then opens as asked. */
function Gate() {
  const state = useSessionState();
  if (state.status === 'restoring') return <Restoring />;
  if (state.status === 'signed-out') return <SigninPage reason={state.reason} />;
  return (
    <ProjectsProvider>
      <Shell />
    </ProjectsProvider>
  );
}

function Shell() {
  const session = useSession();
  const user = useUser();
  const { path, query } = useLocation();
  const pages = PAGES.filter((p) => !p.adminOnly || user.role === 'admin');
  const page = pages.find((p) => p.path === path);
  const project = query.get('project');

  useEffect(() => {
    if (path === '/' || path === '/signin') navigate(href('/projects', { project }), { replace: true });
  }, [path]);

  // On a narrow screen the navigation folds behind a Menu button (styles.css): closed again on every page change.
  const [menuOpen, setMenuOpen] = useState(false);
  const menuToggle = useRef<HTMLButtonElement>(null);
  useEffect(() => setMenuOpen(false), [path]);
  // Attached before the open menu is painted (a passive effect runs later), so an Escape pressed
  // as soon as the menu shows is never missed.
  useLayoutEffect(() => {
    if (!menuOpen) return;
    // Escape folds it and puts focus back on the button, as the account menu does.
    const escape = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setMenuOpen(false);
      menuToggle.current?.focus();
    };
    document.addEventListener('keydown', escape);
    return () => document.removeEventListener('keydown', escape);
  }, [menuOpen]);

  // After an in-app navigation, focus goes to the new page's heading (see PageHeading).
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [path]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Model gateway</span>
        <button type="button" ref={menuToggle} class="nav-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          <span aria-hidden="true">☰ </span>Menu<span class="visually-hidden">{page ? `, on ${page.label}` : ''}</span>
        </button>
        {/* A chosen page (the current one too) folds the menu away. */}
        <nav aria-label="Main" id="main-nav" class={menuOpen ? 'is-open' : undefined} onClick={(e) => (e.target as Element).closest('a') !== null && setMenuOpen(false)}>
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <Link href={href(p.path, { project })} aria-current={p.path === path ? 'page' : undefined}>
                  {p.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <AccountMenu user={user} />
          <button type="button" onClick={() => void session.end()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page ? <page.Page /> : path === '/' || path === '/signin' ? null : <NotFound />}
      </main>
    </>
  );
}

/** While the session cookie is being traded for a token, after a reload or in a new tab. */
function Restoring() {
  useEffect(() => {
    document.title = 'Model gateway';
  }, []);
  return (
    <main id="main" class="signin" aria-busy="true">
      <p class="muted" role="status">
        Signing you in…
      </p>
    </main>
  );
}

function NotFound() {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        There is no page here. Go to <Link href="/projects">Projects</Link>.
      </p>
    </>
  );
}
