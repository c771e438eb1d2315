import { useState } from 'preact/hooks';
import type { Project } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { Dialog } from '../components/dialog.js';
import { ErrorBanner } from '../components/error-banner.js';

/**
 * Deleting a project takes every key with it and cannot be undone, so the user types the
 * project's name first: a click on the wrong card cannot do it. The button stays focusable but
 * inert until the name matches, and says why.
 */
export function DeleteProjectDialog({ project, onClose, onDeleted }: { project: Project | null; onClose: () => void; onDeleted: (project: Project) => void }) {
  const api = useApi();
  const [typed, setTyped] = useState('');
  const [shownFor, setShownFor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [deleted, setDeleted] = useState(false);

  if (project !== null && shownFor !== project.id) {
    setShownFor(project.id);
    setTyped('');
    setError(null);
    setDeleted(false);
  }

  const matches = project !== null && typed.trim() === project.name;

  const close = () => {
    setShownFor(null);
    onClose();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy || project === null || !matches) return;
    setBusy(true);
    setError(null);
    try {
      await api.delete(`/v1/projects/${project.id}`);
      setDeleted(true);
      onDeleted(project);
      close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={project !== null}
      title={`Delete project “${project?.name ?? ''}”?`}
      role="alertdialog"
      describedBy="delete-project-text"
      onClose={close}
      // Its card is gone with it: focus goes to the page heading.
      restoreFocus={() => (deleted ? document.querySelector<HTMLElement>('main h1') : null)}
    >
      <form onSubmit={submit}>
        <div id="delete-project-text">
          <p>
            All of its API keys are deleted with it: every request that uses one of them is refused at once, including requests in flight. Its usage
            records and audit events are kept. This cannot be undone.
          </p>
        </div>
        <ErrorBanner error={error} action="Deleting the project failed" />
        <div class="field">
          <label for="delete-project-name">
            Type <strong class="wrap-anywhere">{project?.name}</strong> to confirm
          </label>
          <input
            id="delete-project-name"
            autofocus
            autocomplete="off"
            spellcheck={false}
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
            aria-describedby="delete-project-hint"
          />
          <p id="delete-project-hint" class="hint">
            {matches ? '✓ The name matches.' : 'The button below works once the name matches exactly.'}
          </p>
        </div>
        <div class="dialog-actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="submit" class="button-danger" aria-disabled={!matches || busy} aria-busy={busy}>
            {busy ? 'Deleting…' : 'Delete project'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
