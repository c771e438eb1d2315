import type { Project, ServedModel } from '../api/types.js';
import { quotaUse } from './format.js';

/**
 * The project list's search, order and paging, done in the browser: GET /v1/projects returns an
 * account's projects whole. Kept apart from the page so the rules can be tested in Node.
 */
export const PROJECT_SORTS = ['name', 'created', 'usage'] as const;
export type ProjectSort = (typeof PROJECT_SORTS)[number];
export const PROJECTS_PER_PAGE = 12;

export interface ProjectListQuery {
  search: string;
  sort: ProjectSort;
  /** 1-based; clamped to the pages there are. */
  page: number;
}

export interface ProjectListView {
  shown: Project[];
  /** Projects that match the search, on every page. */
  matching: number;
  page: number;
  pages: number;
}

/** used / quota; null for a project without a quota, which sorts after every project with one. */
export function usageRatio(project: Pick<Project, 'quota_tokens' | 'used_tokens'>): number | null {
  if (project.quota_tokens === null) return null;
  if (project.quota_tokens === 0) return Number.POSITIVE_INFINITY;
  return project.used_tokens / project.quota_tokens;
}

export function matchesSearch(project: Pick<Project, 'name' | 'id'>, search: string): boolean {
  const needle = search.trim().toLocaleLowerCase();
  return needle === '' || project.name.toLocaleLowerCase().includes(needle) || project.id.startsWith(needle);
}

const byName = (a: Project, b: Project) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base', numeric: true }) || a.id.localeCompare(b.id);

const COMPARE: Record<ProjectSort, (a: Project, b: Project) => number> = {
  name: byName,
  // Newest first: the project just made is the one being looked for.
  created: (a, b) => b.created_at.localeCompare(a.created_at) || byName(a, b),
  // Fullest first, unlimited last: the ones about to be refused lead.
  usage: (a, b) => {
    const ra = usageRatio(a);
    const rb = usageRatio(b);
    if (ra === rb) return b.used_tokens - a.used_tokens || byName(a, b);
    if (ra === null) return 1;
    if (rb === null) return -1;
    return rb - ra;
  },
};

export function viewProjects(projects: readonly Project[], query: ProjectListQuery, perPage = PROJECTS_PER_PAGE): ProjectListView {
  const matching = projects.filter((p) => matchesSearch(p, query.search)).sort(COMPARE[query.sort]);
  const pages = Math.max(1, Math.ceil(matching.length / perPage));
  const page = Math.min(Math.max(1, Math.floor(query.page) || 1), pages);
  return { shown: matching.slice((page - 1) * perPage, page * perPage), matching: matching.length, page, pages };
}

export function parseSort(value: string | null): ProjectSort {
  return (PROJECT_SORTS as readonly string[]).includes(value ?? '') ? (value as ProjectSort) : 'name';
}

/** The projects at 80 % of their quota or more, and those that have used it up. */
export function quotaAlerts(projects: readonly Project[]): { near: Project[]; exhausted: Project[] } {
  const near: Project[] = [];
  const exhausted: Project[] = [];
  for (const p of projects) {
    const level = quotaUse(p).level;
    if (level === 'high') near.push(p);
    else if (level === 'exhausted') exhausted.push(p);
  }
  return { near, exhausted };
}

/** "1 project out of quota · 2 projects near their quota"; null when none is. */
export function quotaAlertSummary(alerts: { near: Project[]; exhausted: Project[] }): string | null {
  const parts: string[] = [];
  const n = alerts.exhausted.length;
  if (n > 0) parts.push(n === 1 ? '1 project out of quota' : `${n} projects out of quota`);
  const m = alerts.near.length;
  if (m > 0) parts.push(m === 1 ? '1 project near its quota' : `${m} projects near their quota`);
  return parts.length === 0 ? null : parts.join(' · ');
}

/**
 * What a project's allow-list lets through, measured against the models the gateway serves:
 * every model (no list), some, or none at all, when the list is empty or names only models no
 * provider serves. Then every request of the project is refused.
 */
export type AllowListState =
  | { kind: 'all' }
  | { kind: 'some'; served: string[]; unserved: string[] }
  | { kind: 'none'; reason: 'empty' | 'unserved'; unserved: string[] };

export function allowListState(allowed: readonly string[] | null | undefined, served: readonly ServedModel[] | undefined): AllowListState {
  if (allowed === null || allowed === undefined) return { kind: 'all' };
  if (allowed.length === 0) return { kind: 'none', reason: 'empty', unserved: [] };
  // While the served models are unknown, the list is taken at its word.
  if (served === undefined) return { kind: 'some', served: [...allowed], unserved: [] };
  const ids = new Set(served.map((m) => m.id));
  const ok = allowed.filter((m) => ids.has(m));
  const unserved = allowed.filter((m) => !ids.has(m));
  return ok.length === 0 ? { kind: 'none', reason: 'unserved', unserved } : { kind: 'some', served: ok, unserved };
}
