import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** The dashboards, alert rules and scrape config in deploy/grafana, read as their consumers read them. */
export const GRAFANA_DIR = new URL('.', import.meta.url).pathname;

export interface Target {
  expr?: string;
  refId?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}

export interface Panel {
  id?: number;
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string } | null;
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}

export interface Variable {
  name: string;
  type: string;
  query?: string | { query?: string };
  datasource?: { type?: string; uid?: string } | null;
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

export interface AlertRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFile {
  groups: { name: string; rules: AlertRule[] }[];
}

export interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  params?: Record<string, string[]>;
  static_configs?: { targets: string[] }[];
}

export function loadDashboards(): { file: string; dashboard: Dashboard }[] {
  const dir = join(GRAFANA_DIR, 'dashboards');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Dashboard }));
}

export function loadRules(): RuleFile {
  return parseYaml(readFileSync(join(GRAFANA_DIR, 'alerts', 'gateway-rules.yaml'), 'utf8')) as RuleFile;
}

export function loadPrometheusConfig(): { rule_files: string[]; scrape_configs: ScrapeConfig[] } {
  return parseYaml(readFileSync(join(GRAFANA_DIR, 'prometheus.yml'), 'utf8')) as { rule_files: string[]; scrape_configs: ScrapeConfig[] };
}

/** Every panel, those inside rows included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Where a query came from, for messages that say which panel or rule to fix. */
export interface Query {
  where: string;
  expr: string;
  /** A Grafana variable query (label_values(…)) rather than PromQL. */
  variable: boolean;
  legendFormat?: string;
}

export function dashboardQueries(file: string, dashboard: Dashboard): Query[] {
  const queries: Query[] = [];
  for (const panel of allPanels(dashboard)) {
    for (const target of panel.targets ?? []) {
      if (target.expr === undefined) continue;
      const query: Query = { where: `${file} panel "${panel.title}" ${target.refId}`, expr: target.expr, variable: false };
      if (target.legendFormat !== undefined) query.legendFormat = target.legendFormat;
      queries.push(query);
    }
  }
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const expr = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    if (expr !== undefined) queries.push({ where: `${file} variable $${variable.name}`, expr, variable: true });
  }
  return queries;
}

export function ruleQueries(rules: RuleFile): Query[] {
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr, variable: false })));
}
