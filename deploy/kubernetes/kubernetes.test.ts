import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadControlPlaneConfig, loadProxyConfig, loadWriterConfig, parseProvidersFile, type Env } from '@gateway/shared';
import { PROVIDER_TYPES } from '../../proxy/src/providers/registry.js';
import {
  checkAutoscaler,
  checkEnv,
  checkGrace,
  checkInternalChannel,
  checkProbes,
  checkReferences,
  checkScrape,
  checkSecurity,
  checkSelectors,
  checkWorkers,
  containerEnv,
  gatewayContainers,
  providersFile,
  type Container,
} from './checks.js';
import { documentedVariables, providerFileVariables } from '../roles.js';
import { exampleSecrets, OVERLAYS, renderOverlay, type Overlay } from './manifests.js';
import { validateObject, type K8sObject } from './schema-check.js';

/**
 * Each overlay as `kubectl kustomize` renders it: every object valid against the Kubernetes API
 * schemas (kubernetes-models, offline), and what the gateway needs of it — probes at paths its
 * code serves, only variables it reads, a grace period that outlasts the drain, the autoscaler on
 * the proxy, selectors that select. The last block breaks the manifests on purpose, one typo at a
 * time, and each must be caught.
 */
const rendered = new Map<Overlay, K8sObject[]>();

beforeAll(async () => {
  for (const overlay of OVERLAYS) rendered.set(overlay, await renderOverlay(overlay));
}, 60_000);

function objectsOf(overlay: Overlay): K8sObject[] {
  const objects = rendered.get(overlay);
  if (objects === undefined) throw new Error(`${overlay} was not rendered`);
  return objects;
}

function providerVariables(objects: readonly K8sObject[]): Set<string> {
  const file = providersFile(objects, []);
  return 'text' in file ? providerFileVariables(file.text) : new Set();
}

/** Every product check of an overlay's objects, as one list of problems. */
function productProblems(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const file = providersFile(objects, examples);
  return [
    ...checkReferences(objects, examples),
    ...checkProbes(objects, examples),
    ...checkEnv(objects, examples, documentedVariables(), providerVariables(objects)),
    ...checkGrace(objects, examples),
    ...checkAutoscaler(objects),
    ...checkSelectors(objects),
    ...checkSecurity(objects),
    ...checkScrape(objects, examples),
    ...checkWorkers(objects, examples),
    ...checkInternalChannel(objects, examples),
    ...('problems' in file ? file.problems : []),
  ];
}

describe.each(OVERLAYS)('the %s overlay', (overlay) => {
  it('renders the three roles with their services, autoscaler and disruption budgets', () => {
    const names = objectsOf(overlay).map((o) => `${String(o.kind)}/${String((o.metadata as { name: string }).name)}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'Deployment/gateway-proxy',
        'Deployment/gateway-control-plane',
        'Deployment/gateway-writer',
        'Service/gateway-proxy',
        'Service/gateway-control-plane',
        'HorizontalPodAutoscaler/gateway-proxy',
        'PodDisruptionBudget/gateway-proxy',
        'PodDisruptionBudget/gateway-control-plane',
        'PodDisruptionBudget/gateway-writer',
      ]),
    );
  });

  it('holds only objects the Kubernetes API accepts, with no unknown field', () => {
    expect(objectsOf(overlay).flatMap(validateObject)).toEqual([]);
  });

  it('gives the gateway what it needs: probes, variables, grace, autoscaler, selectors, security', () => {
    expect(productProblems(objectsOf(overlay), exampleSecrets(overlay))).toEqual([]);
  });

  it("reads its configuration as each role would: the dev overlay's placeholders pass in development, the example Secret's are refused in production, and both HTTP roles believe the ingress", () => {
    const objects = objectsOf(overlay);
    // What the image sets (deploy/docker/Dockerfile), under what the manifests set.
    const image: Env = { NODE_ENV: 'production', CONTROL_HOST: '0.0.0.0' };
    const loaders = { proxy: loadProxyConfig, 'control-plane': loadControlPlaneConfig, writer: loadWriterConfig, migrate: null } as const;
    for (const { role, container, init } of gatewayContainers(objects)) {
      const load = loaders[role];
      if (init || load === null) continue;
      const env: Env = { ...image, ...Object.fromEntries([...containerEnv(objects, exampleSecrets(overlay), container)].map(([k, v]) => [k, v.value])) };
      if (overlay === 'dev') {
        expect(env.NODE_ENV, role).toBe('development');
        const config = load(env);
        if (role !== 'writer') expect((config as { trustProxy: { trusts(a: string): boolean } }).trustProxy.trusts('10.42.0.7'), role).toBe(true);
        if (role === 'control-plane') expect((config as { host: string }).host).toBe('0.0.0.0');
      } else {
        expect(() => load(env), role).toThrow(ConfigError);
        expect(() => load(env), role).toThrow(/holds? a placeholder value/);
      }
    }
  });

  it('mounts a providers file the proxy accepts', () => {
    const objects = objectsOf(overlay);
    const file = providersFile(objects, exampleSecrets(overlay));
    if (!('text' in file)) throw new Error(file.problems.join('\n'));
    const env = Object.fromEntries([...providerFileVariables(file.text)].map((name) => [name, 'placeholder']));
    expect(parseProvidersFile(file.text, 'providers.yaml', env, PROVIDER_TYPES).providers.length).toBeGreaterThan(0);
  });

  it('holds no secret value but clearly marked placeholders', () => {
    const values = [...objectsOf(overlay), ...exampleSecrets(overlay)]
      .filter((o) => o.kind === 'Secret')
      .flatMap((o) => [
        ...Object.values((o.data ?? {}) as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString('utf8')),
        ...Object.values((o.stringData ?? {}) as Record<string, string>),
      ]);
    // A Redis address without a password is not a secret; everything else must say it is a stand-in.
    const unmarked = values.filter((v) => !/dev-only-placeholder|CHANGE-ME/.test(v) && !/^redis:\/\/[\w.-]+:\d+$/.test(v));
    expect(unmarked).toEqual([]);
  });
});

describe('the production overlay', () => {
  it('runs more and bigger proxies than dev, on Redis Cluster, with one data plane per core', () => {
    const size = (overlay: Overlay) => {
      const proxy = objectsOf(overlay).find((o) => o.kind === 'Deployment' && (o.metadata as { name: string }).name === 'gateway-proxy') as K8sObject;
      const spec = proxy.spec as { replicas: number; template: { spec: { containers: Container[] } } };
      return { replicas: spec.replicas, cpu: Number(spec.template.spec.containers[0]?.resources?.limits?.cpu) };
    };
    expect(size('production').replicas).toBeGreaterThan(size('dev').replicas);
    expect(size('production').cpu).toBeGreaterThan(size('dev').cpu);
    const config = objectsOf('production').find((o) => o.kind === 'ConfigMap' && (o.metadata as { name: string }).name.startsWith('gateway-config'));
    expect((config?.data as Record<string, string>).REDIS_CLUSTER_NODES).toMatch(/^[\w.-]+:\d+(,[\w.-]+:\d+)+$/);
  });
});

// --- a typo must fail -------------------------------------------------------------------------

type Path = (string | number)[];

function edited(objects: readonly K8sObject[], kind: string, name: string, path: Path, value: unknown): K8sObject[] {
  const copy = structuredClone(objects) as K8sObject[];
  const target = copy.find((o) => o.kind === kind && (o.metadata as { name: string }).name === name);
  if (target === undefined) throw new Error(`no ${kind}/${name}`);
  let node = target as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** Renames a key in place (a misspelt field), keeping its value. */
function renamed(objects: readonly K8sObject[], kind: string, name: string, path: Path, to: string): K8sObject[] {
  const copy = structuredClone(objects) as K8sObject[];
  const target = copy.find((o) => o.kind === kind && (o.metadata as { name: string }).name === name) as Record<string | number, unknown>;
  let node = target;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = path.at(-1) as string;
  node[to] = node[last];
  delete node[last];
  return copy;
}

const PROXY_CONTAINER: Path = ['spec', 'template', 'spec', 'containers', 0];

function envIndex(objects: readonly K8sObject[], deployment: string, variable: string): number {
  const d = objects.find((o) => o.kind === 'Deployment' && (o.metadata as { name: string }).name === deployment) as K8sObject;
  const env = (d.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]?.env ?? [];
  return env.findIndex((v) => v.name === variable);
}

describe('a typo in the manifests fails', () => {
  const base = () => objectsOf('production');
  const examples = () => exampleSecrets('production');
  const problems = (objects: K8sObject[]) => [...objects.flatMap(validateObject), ...productProblems(objects, examples())];

  it.each([
    ['a misspelt field', () => renamed(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'readinessProbe'], 'readinessProb'), /readinessProb is not a field of Deployment/],
    ['a misspelt nested field', () => renamed(base(), 'HorizontalPodAutoscaler', 'gateway-proxy', ['spec', 'minReplicas'], 'minReplica'), /minReplica is not a field/],
    ['an unknown kind', () => edited(base(), 'Service', 'gateway-proxy', ['kind'], 'Servce'), /unknown kind Servce/],
    ['an unknown apiVersion', () => edited(base(), 'HorizontalPodAutoscaler', 'gateway-proxy', ['apiVersion'], 'autoscaling/v9'), /unknown apiVersion autoscaling\/v9/],
    ['a wrong type', () => edited(base(), 'Deployment', 'gateway-writer', ['spec', 'replicas'], 'three'), /replicas must be integer/],
    ['a readiness path the proxy does not serve', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'readinessProbe', 'httpGet', 'path'], '/ready'), /readinessProbe asks \/ready/],
    ['a start-up probe path nobody serves', () => edited(base(), 'Deployment', 'gateway-control-plane', [...PROXY_CONTAINER, 'startupProbe', 'httpGet', 'path'], '/health'), /startupProbe asks \/health, not \/healthz/],
    ['a probe on a port nobody listens on', () => edited(base(), 'Deployment', 'gateway-writer', [...PROXY_CONTAINER, 'livenessProbe', 'httpGet', 'port'], 8083), /livenessProbe port 8083 is not a port the writer listens on/],
    ['a misspelt variable', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'env', envIndex(base(), 'gateway-proxy', 'DRAIN_TIMEOUT_MS'), 'name'], 'DRAIN_TIMEOUT'), /DRAIN_TIMEOUT \(from env\) is not a variable the gateway reads/],
    ['database credentials given to the proxy', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'env', 0], { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'gateway-secrets', key: 'DATABASE_URL' } } }), /the proxy must not be given DATABASE_URL/],
    ['a misspelt secret key', () => edited(base(), 'Deployment', 'gateway-control-plane', [...PROXY_CONTAINER, 'env', envIndex(base(), 'gateway-control-plane', 'JWT_SECRET'), 'valueFrom', 'secretKeyRef', 'key'], 'JWT_SECRT'), /reads key JWT_SECRT that Secret gateway-secrets does not have/],
    ['a grace period shorter than the drain', () => edited(base(), 'Deployment', 'gateway-proxy', ['spec', 'template', 'spec', 'terminationGracePeriodSeconds'], 30), /terminationGracePeriodSeconds 30 is shorter/],
    ['an autoscaler on the wrong Deployment', () => edited(base(), 'HorizontalPodAutoscaler', 'gateway-proxy', ['spec', 'scaleTargetRef', 'name'], 'gateway-proxies'), /scales Deployment\/gateway-proxies/],
    ['a disruption budget selecting nothing', () => edited(base(), 'PodDisruptionBudget', 'gateway-writer', ['spec', 'selector', 'matchLabels', 'app.kubernetes.io/component'], 'writers'), /PodDisruptionBudget\/gateway-writer: selects the pods of 0 workloads/],
    ['a Service selecting nothing', () => edited(base(), 'Service', 'gateway-control-plane', ['spec', 'selector', 'app.kubernetes.io/component'], 'controlplane'), /Service\/gateway-control-plane: selects no pods/],
    ['more proxy workers than cores', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'resources', 'limits', 'cpu'], '1'), /PROXY_WORKERS 2 for a CPU limit of 1/],
    ['a writable root filesystem', () => edited(base(), 'Deployment', 'gateway-writer', [...PROXY_CONTAINER, 'securityContext', 'readOnlyRootFilesystem'], false), /gateway-writer writer: root filesystem is writable/],
    ['a scrape port without metrics', () => edited(base(), 'Deployment', 'gateway-proxy', ['spec', 'template', 'metadata', 'annotations', 'prometheus.io/port'], '8080'), /\/metrics on PROXY_PORT does not serve metrics/],
    ['proxies pointed at no control plane', () => edited(base(), 'Service', 'gateway-control-plane', ['metadata', 'name'], 'gateway-cp'), /CONTROL_PLANE_URL http:\/\/gateway-control-plane:8081: no Service gateway-control-plane/],
    ['proxies pointed at the wrong port', () => edited(base(), 'Service', 'gateway-control-plane', ['spec', 'ports', 0, 'port'], 80), /port 8081 of Service gateway-control-plane does not reach/],
    ['the two ends of the invalidation stream on different tokens', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'env', envIndex(base(), 'gateway-proxy', 'INTERNAL_TOKEN'), 'valueFrom', 'secretKeyRef', 'key'], 'JWT_SECRET'), /INTERNAL_TOKEN: the proxy reads gateway-secrets\/JWT_SECRET/],
    ['the providers file mounted elsewhere', () => edited(base(), 'Deployment', 'gateway-proxy', [...PROXY_CONTAINER, 'volumeMounts', 0, 'mountPath'], '/etc/providers'), /nothing is mounted at GATEWAY_CONFIG/],
  ])('%s', (_what, make, expected) => {
    expect(problems(base())).toEqual([]);
    expect(problems(make()).join('\n')).toMatch(expected);
  });
});
