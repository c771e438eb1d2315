import { useEffect, useRef, useState } from 'preact/hooks';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { mayDo } from '../lib/project-permissions.js';
import { Link } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';
import { useProjectRole } from '../lib/use-project-role.js';

/**
 * A project's guardrails (docs/guardrails.md): the ordered list, edited as JSON (the API checks it
 * and names the guardrail at fault), and a "test this text" box that runs the list being edited
 * on a text through POST …/guardrails/test, before or after saving. A webhook guard's generated
 * secret is shown once, after the save that made it.
 */
interface TestResult {
  blocked_by: string | null;
  text: string | null;
  guardrails: { id: string; type: string; action: string; run: boolean; matches: { kind: string; text: string }[] }[];
}

const EXAMPLE = `[
  {"id": "no-secrets", "stage": "both", "type": "pii", "action": "block", "entities": ["secret"]},
  {"id": "contacts", "stage": "input", "type": "pii", "action": "mask", "entities": ["email", "phone"]}
]`;

export function GuardrailsPage() {
  const api = useApi();
  const notify = useToasts();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const { role } = useProjectRole(projectId);
  const manage = mayDo(role, 'project.update');
  const saved = useAsync(
    () => (projectId === null ? Promise.resolve(null) : api.get<{ data: unknown[] }>(`/v1/projects/${projectId}/guardrails`).then((l) => l.data)),
    [projectId],
  );
  const [draft, setDraft] = useState('');
  // What the user typed is never replaced by a load that lands after it.
  const [edited, setEdited] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [secrets, setSecrets] = useState<string[]>([]);
  const [sample, setSample] = useState('');
  const [stage, setStage] = useState<'input' | 'output'>('input');
  const [result, setResult] = useState<TestResult | null>(null);
  const [testError, setTestError] = useState<unknown>(null);

  // Another project picked: its own list replaces the draft (the first project known is no change).
  const shownFor = useRef<string | null>(null);
  useEffect(() => {
    if (shownFor.current !== null && shownFor.current !== projectId) {
      setEdited(false);
      setDraft('');
    }
    if (projectId !== null) shownFor.current = projectId;
  }, [projectId]);
  useEffect(() => {
    if (edited || saved.data === null || saved.data === undefined) return;
    setDraft(saved.data.length === 0 ? '' : JSON.stringify(saved.data, null, 2));
  }, [saved.data, edited]);

  const parsed = (): unknown[] | Error => {
    if (draft.trim() === '') return [];
    try {
      const value = JSON.parse(draft) as unknown;
      return Array.isArray(value) ? value : new Error('The guardrails must be a JSON list.');
    } catch (err) {
      return new Error(`Not JSON: ${(err as Error).message}`);
    }
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setSaveError(null);
    const list = parsed();
    if (list instanceof Error) return setSaveError(list);
    try {
      const answer = await api.put<{ data: { id: string; secret?: string }[] }>(`/v1/projects/${projectId}/guardrails`, list);
      setSecrets(answer.data.filter((g) => typeof g.secret === 'string').map((g) => `${g.id}: ${g.secret}`));
      notify('Guardrails saved; the proxies apply them within seconds.');
      setEdited(false);
      saved.reload();
    } catch (err) {
      setSaveError(err);
    }
  };

  const test = async (event: Event) => {
    event.preventDefault();
    setTestError(null);
    setResult(null);
    const list = parsed();
    if (list instanceof Error) return setTestError(list);
    try {
      // Webhook secrets are not shown, so a draft holding a webhook guard is tested as saved.
      const body = draft.includes('"webhook"') ? { text: sample, stage } : { text: sample, stage, guardrails: list };
      setResult(await api.post<TestResult>(`/v1/projects/${projectId}/guardrails/test`, body));
    } catch (err) {
      setTestError(err);
    }
  };

  return (
    <>
      <PageHeading title="Guardrails">
        <ProjectPicker selected={selected} allowAll={false} />
      </PageHeading>
      {projectId === null && selected.project === null && (
        <p class="empty">
          No project yet. <Link href="/projects">Create a project</Link> first.
        </p>
      )}
      {projectId !== null && (
        <>
          <section aria-labelledby="guardrail-list-heading" aria-busy={saved.loading}>
            <h2 id="guardrail-list-heading">Checks on prompts and answers, in order</h2>
            <ErrorBanner error={saved.error} action="Loading the guardrails failed" />
            <form onSubmit={save}>
              <label for="guardrails-json">Guardrails (JSON list; empty: none)</label>
              <textarea id="guardrails-json" rows={14} spellcheck={false} value={draft} placeholder={EXAMPLE} readOnly={!manage} onInput={(e) => {
                  setEdited(true);
                  setDraft((e.target as HTMLTextAreaElement).value);
                }} />
              <ErrorBanner error={saveError} action="Saving the guardrails failed" />
              {secrets.length > 0 && (
                <p class="banner banner-info" role="status">
                  Signing secrets of new webhook guards, shown this once: {secrets.join(', ')}
                </p>
              )}
              {manage ? <button type="submit">Save</button> : <p>Project admins and owners change the guardrails.</p>}
            </form>
          </section>
          <section aria-labelledby="guardrail-test-heading">
            <h2 id="guardrail-test-heading">Test this text</h2>
            <form onSubmit={test}>
              <label for="guardrail-sample">Text</label>
              <textarea id="guardrail-sample" rows={4} value={sample} onInput={(e) => setSample((e.target as HTMLTextAreaElement).value)} />
              <label for="guardrail-stage">As</label>
              <select id="guardrail-stage" value={stage} onChange={(e) => setStage((e.target as HTMLSelectElement).value as 'input' | 'output')}>
                <option value="input">a prompt (input)</option>
                <option value="output">an answer (output)</option>
              </select>
              <button type="submit">Test</button>
            </form>
            <ErrorBanner error={testError} action="Testing failed" />
            {result !== null && (
              <div role="status" aria-label="Test result">
                <p>{result.blocked_by === null ? 'Allowed.' : `Blocked by ${result.blocked_by}.`}</p>
                {result.text !== null && <pre class="guardrail-output">{result.text}</pre>}
                <ul>
                  {result.guardrails.map((g) => (
                    <li key={g.id}>
                      {g.id} ({g.type}, {g.action}): {!g.run ? 'not run here (called by the proxies)' : g.matches.length === 0 ? 'nothing found' : g.matches.map((m) => `${m.kind} “${m.text}”`).join(', ')}
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </section>
        </>
      )}
    </>
  );
}
