import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startHarness as startProxy, type Harness as ProxyHarness } from '../../proxy/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { freePort } from '../../test-support/services.js';
import { parseExposition, type Series } from './exposition.js';
import { allPanels, dashboardQueries, GRAFANA_DIR, loadDashboards, loadPrometheusConfig, loadRules, ruleQueries, type Query } from './grafana-files.js';
import { promqlRefs, variableQueryRefs, type PromqlRefs } from './promql-refs.js';

/**
 * The dashboards and alert rules against the metrics the services really export: a proxy, a
 * control plane and a writer are started, given a little traffic of every kind the panels show
 * (a success after a failed provider, refusals, a failed sign-in, an unreadable record batch), and
 * scraped. Every metric and label a query names must be among what they serve, so a renamed
 * metric or a typo fails here rather than as an empty panel or an alert that never fires.
 */

/** Series Prometheus makes itself (`up`) or gets from the blackbox exporter's readiness probes. */
const EXTERNAL: Record<string, string[]> = { up: ['job', 'instance'], probe_success: ['job', 'instance'] };
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];
const ROLE_JOBS = ['gateway-proxy', 'gateway-control-plane', 'gateway-writer'];

// Two providers for one model: the first refuses connections, so requests fail over (upstream
// errors, retries) and after three failures it cools down; the second is the built-in mock.
const PROVIDERS = `providers:
  - name: down
    type: openai
    base_url: http://127.0.0.1:1/v1
    api_key: sk-down-provider-secret
    timeout_ms: 300
    models: [chat]
  - name: offline
    type: mock
    models: [chat]
`;

let cp: ControlPlaneHarness;
let proxy: ProxyHarness;
let writer: Writer;
let series: Series;
const urls: Record<string, string> = {};

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  cp = await startControlPlane('grafana');
  const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'grafana' } });
  const key = await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'grafana' } });
  expect(key.status).toBe(201);
  // The proxy and the writer share the control plane's Redis prefix and database, as in production.
  proxy = await startProxy('grafana', PROVIDERS, { REDIS_PREFIX: cp.prefix });
  writer = await startWriter(
    { DATABASE_URL: cp.db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, WRITER_PORT: String(await freePort()), LOG_LEVEL: 'silent' },
    { host: '127.0.0.1' },
  );
  urls.proxy = `http://127.0.0.1:${proxy.proxy.metricsPort}`;
  urls.controlPlane = `http://127.0.0.1:${cp.cp.metricsPort}`;
  urls.writer = `http://127.0.0.1:${writer.port}`;

  const ask = async (apiKey: string, model: string) => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    return res.status;
  };
  for (let i = 0; i < 4; i++) expect(await ask(key.body.key, 'chat')).toBe(200);
  expect(await ask('gw_not-a-key', 'chat')).toBe(401);
  expect(await ask(key.body.key, 'no-such-model')).toBe(404);
  expect((await cp.api('POST', '/v1/signins', { body: { grant_type: 'password', email: 'nobody@example.test', password: 'wrong' } })).status).toBe(401);

  // An unreadable batch, so that the writer's invalid-records series exists too.
  const keys = new RedisKeys(cp.prefix);
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(keys.recordsQueue, { connection, prefix: keys.bullPrefix });
  await queue.add('batch', 'not a record batch', { removeOnComplete: true, removeOnFail: false });
  await queue.close();
  await connection.quit();

  await proxy.proxy.deps.records.flush(5_000);
  const written = (text: string) => /^gateway_writer_records_written_total\{table="usage_records"\} [1-9]/m.test(text);
  const invalid = (text: string) => /^gateway_writer_invalid_records_total\{table="batch"\} [1-9]/m.test(text);
  await waitFor('the writer to write the records and refuse the bad batch', async () => {
    const text = await scrape(urls.writer!);
    return written(text) && invalid(text);
  });

  series = new Map();
  for (const url of Object.values(urls)) parseExposition(await scrape(url), series);
});

afterAll(async () => {
  await proxy?.stop();
  await writer?.close();
  await cp?.close();
});

const dashboards = loadDashboards();
const rules = loadRules();
const queries: Query[] = [...dashboards.flatMap(({ file, dashboard }) => dashboardQueries(file, dashboard)), ...ruleQueries(rules)];
const refsOf = (q: Query): PromqlRefs & { label?: string } => (q.variable ? variableQueryRefs(q.expr) : promqlRefs(q.expr));
const labelsOf = (metric: string): Set<string> => new Set([...(series.get(metric) ?? EXTERNAL[metric] ?? []), ...TARGET_LABELS]);

describe('metrics named by the dashboards and alert rules', () => {
  it('finds queries to check in every dashboard and in the rules', () => {
    for (const { file } of dashboards) expect(queries.filter((q) => q.where.startsWith(file)).length, file).toBeGreaterThan(5);
    expect(ruleQueries(rules).length).toBeGreaterThan(5);
  });

  it('are all exported by a proxy, a control plane or a writer', () => {
    const missing: string[] = [];
    for (const q of queries) {
      for (const { metric } of refsOf(q).selectors) {
        if (!series.has(metric) && !(metric in EXTERNAL)) missing.push(`${q.where}: ${metric}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('match on, group by and show only labels those metrics carry', () => {
    const wrong: string[] = [];
    for (const q of queries) {
      const refs = refsOf(q);
      const carried = new Set(refs.selectors.flatMap((s) => [...labelsOf(s.metric)]));
      for (const s of refs.selectors) {
        for (const label of s.labels) if (!labelsOf(s.metric).has(label)) wrong.push(`${q.where}: ${s.metric} has no label ${label}`);
      }
      for (const label of [...refs.grouping, ...(refs.label === undefined ? [] : [refs.label])]) {
        if (!carried.has(label)) wrong.push(`${q.where}: groups by or lists ${label}, which none of its metrics carries`);
      }
      // A legend can only show what survives the query: grouped labels after an aggregation.
      const shown = refs.aggregates ? new Set(refs.grouping) : carried;
      for (const [, label] of (q.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
        if (!shown.has(label!)) wrong.push(`${q.where}: legend shows ${label}, which the query does not return`);
      }
    }
    for (const group of rules.groups) {
      for (const rule of group.rules) {
        const refs = promqlRefs(rule.expr);
        const kept = refs.aggregates ? new Set(refs.grouping) : new Set(refs.selectors.flatMap((s) => [...labelsOf(s.metric)]));
        for (const text of Object.values(rule.annotations ?? {})) {
          for (const [, label] of text.matchAll(/\$labels\.(\w+)/g)) {
            if (!kept.has(label!)) wrong.push(`rule ${rule.alert}: annotation uses $labels.${label}, which its expression does not return`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('dashboards', () => {
  it('are the three documented ones, with unique uids', () => {
    expect(dashboards.map((d) => d.dashboard.uid).sort()).toEqual(['gateway-control-plane', 'gateway-overview', 'gateway-records']);
  });

  for (const { file, dashboard } of dashboards) {
    describe(file, () => {
      it('has a current schema, a Prometheus datasource variable and job/instance variables', () => {
        expect(dashboard.title).toMatch(/^Model gateway: /);
        expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
        const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
        expect(vars.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
        for (const name of ['job', 'instance']) {
          expect(vars[name], name).toMatchObject({ type: 'query', datasource: { type: 'prometheus', uid: '${datasource}' } });
        }
      });

      it('gives every panel a title, an id of its own, a place and the datasource variable', () => {
        const panels = allPanels(dashboard);
        expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
        for (const panel of panels) {
          expect(panel.title, `panel ${panel.id}`).toBeTruthy();
          expect(panel.gridPos, panel.title).toBeDefined();
          if (panel.type === 'row') continue;
          expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
          expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
          for (const target of panel.targets ?? []) {
            expect(target.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
            expect(target.refId, panel.title).toBeTruthy();
            expect(target.expr, panel.title).toBeTruthy();
          }
        }
      });

      it('filters every panel query by the job and instance variables', () => {
        const unfiltered: string[] = [];
        for (const q of dashboardQueries(file, dashboard).filter((q) => !q.variable)) {
          for (const s of promqlRefs(q.expr).selectors) {
            if (!s.labels.includes('job') || !s.labels.includes('instance')) unfiltered.push(`${q.where}: ${s.metric}`);
          }
          for (const [matchers] of q.expr.matchAll(/\{[^{}]*\}/g)) {
            if (!matchers.includes('job=~"$job"') || !matchers.includes('instance=~"$instance"')) unfiltered.push(`${q.where}: ${matchers}`);
          }
        }
        expect(unfiltered).toEqual([]);
      });
    });
  }
});

describe('alert rules', () => {
  const all = rules.groups.flatMap((g) => g.rules);

  it('give every alert a name of its own, a duration, a severity and its texts', () => {
    expect(new Set(all.map((r) => r.alert)).size).toBe(all.length);
    for (const rule of all) {
      expect(rule.alert, rule.expr).toMatch(/^Gateway[A-Z]\w+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      for (const text of ['summary', 'description', 'runbook']) expect(rule.annotations?.[text], `${rule.alert} ${text}`).toBeTruthy();
    }
  });

  it('name only jobs of the example scrape config', () => {
    const jobs = new Set(loadPrometheusConfig().scrape_configs.map((s) => s.job_name));
    for (const rule of all) {
      for (const [, values] of rule.expr.matchAll(/\bjob=~?"([^"]+)"/g)) {
        for (const job of values!.split('|')) expect(jobs, rule.alert).toContain(job);
      }
    }
  });

  it('each have a runbook entry in docs/grafana.md', () => {
    const docs = readFileSync(join(GRAFANA_DIR, '..', '..', 'docs', 'grafana.md'), 'utf8');
    for (const rule of all) expect(docs, rule.alert).toContain(`### ${rule.alert}`);
    for (const { file } of dashboards) expect(docs).toContain(file);
  });
});

describe('example Prometheus config', () => {
  const config = loadPrometheusConfig();
  const job = (name: string) => config.scrape_configs.find((s) => s.job_name === name);

  it('loads the rules and scrapes /metrics of every role', () => {
    for (const file of config.rule_files) expect(existsSync(join(GRAFANA_DIR, file)), file).toBe(true);
    for (const name of ROLE_JOBS) expect(job(name)?.metrics_path ?? '/metrics', name).toBe('/metrics');
  });

  it("probes the services' /readyz, which answer 200 when their dependencies do", async () => {
    const probe = job('gateway-readiness');
    expect(probe).toMatchObject({ metrics_path: '/probe', params: { module: ['http_2xx'] } });
    for (const target of probe?.static_configs?.flatMap((s) => s.targets) ?? []) expect(new URL(target).pathname).toBe('/readyz');
    for (const [role, url] of Object.entries(urls)) expect((await fetch(`${url}/readyz`)).status, role).toBe(200);
  });
});
