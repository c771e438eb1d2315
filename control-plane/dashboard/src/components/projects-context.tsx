import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useId } from 'preact/hooks';
import type { List, Project } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { href, navigate, useLocation } from '../lib/router.js';
import { useAsync, type Async } from '../lib/use-async.js';

/**
 * The projects the signed-in account can see, loaded once and shared by every page's project
 * picker; a page that changes projects reloads it. The selected project lives in the URL
 * (`?project=`), so a link or a reload keeps it.
 */
const ProjectsContext = createContext<Async<Project[]> | null>(null);

export function ProjectsProvider({ children }: { children: ComponentChildren }) {
  const api = useApi();
  const projects = useAsync(() => api.get<List<Project>>('/v1/projects').then((list) => list.data), []);
  return <ProjectsContext.Provider value={projects}>{children}</ProjectsContext.Provider>;
}

export function useProjects(): Async<Project[]> {
  const value = useContext(ProjectsContext);
  if (value === null) throw new Error('useProjects outside ProjectsProvider');
  return value;
}

export interface SelectedProject {
  /** null: all projects (where allowed), or none yet. */
  projectId: string | null;
  project: Project | null;
  select(id: string | null): void;
}

/** With `required`, a page that needs one project opens on the first when the URL names none. */
export function useSelectedProject(options: { required: boolean }): SelectedProject {
  const { path, query } = useLocation();
  const projects = useProjects();
  const fromUrl = query.get('project');
  const known = projects.data?.find((p) => p.id === fromUrl) ?? null;
  const fallback = options.required ? (projects.data?.[0] ?? null) : null;
  const project = known ?? (fromUrl === null || projects.data !== undefined ? fallback : null);

  const select = (id: string | null) => {
    const next = new URLSearchParams(query);
    if (id === null) next.delete('project');
    else next.set('project', id);
    navigate(href(path, Object.fromEntries(next)), { replace: true });
  };

  useEffect(() => {
    if (projects.data === undefined) return;
    // A project that no longer exists (deleted, or not visible to this account) leaves the URL.
    if (fromUrl !== null && known === null) select(fallback?.id ?? null);
    else if (fromUrl === null && fallback !== null) select(fallback.id);
  }, [projects.data, fromUrl, known, fallback?.id]);

  return { projectId: project?.id ?? (options.required ? null : fromUrl), project, select };
}

export function ProjectPicker({ selected, allowAll }: { selected: SelectedProject; allowAll: boolean }) {
  const projects = useProjects();
  const id = useId();
  const list = projects.data ?? [];
  return (
    <div class="field field-inline project-picker">
      <label for={id}>Project</label>
      <select id={id} value={selected.projectId ?? ''} onChange={(e) => selected.select(e.currentTarget.value === '' ? null : e.currentTarget.value)} disabled={list.length === 0}>
        {allowAll && <option value="">All projects</option>}
        {!allowAll && list.length === 0 && <option value="">No projects yet</option>}
        {list.map((p) => (
          <option value={p.id} key={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </div>
  );
}
