import { DEFAULT_DRAIN_MS, FLUSH_MARGIN_MS, FORBIDDEN, LISTENERS, listenerPort, REQUIRED, roleOfCommand, serves, WRITER_CLOSE_MS, type Role } from '../roles.js';
import type { K8sObject } from './schema-check.js';

/**
 * What the gateway needs of its manifests, beyond what the API accepts. Each check returns the
 * problems it finds as `Kind/name: message` lines (none when all is well); the facts it checks
 * against come from the code and the README (deploy/roles.ts).
 */

// --- reading the manifests -------------------------------------------------------------------

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef };
}
interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}
interface Probe {
  httpGet?: { path?: string; port: string | number };
}
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean };
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: { name: string; configMap?: { name: string; optional?: boolean }; secret?: { secretName: string; optional?: boolean } }[];
}
interface Workload {
  kind: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  pod: PodSpec;
}

function meta(obj: K8sObject): { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } {
  return (obj.metadata ?? { name: '?' }) as { name: string };
}

function spec<T>(obj: K8sObject): T {
  return (obj.spec ?? {}) as T;
}

export function objectName(obj: K8sObject): string {
  return `${String(obj.kind)}/${meta(obj).name}`;
}

export function workloads(objects: readonly K8sObject[]): Workload[] {
  return objects
    .filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(String(o.kind)))
    .map((o) => {
      const template = spec<{ template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec } }>(o).template;
      return { kind: String(o.kind), name: meta(o).name, labels: template.metadata?.labels ?? {}, annotations: template.metadata?.annotations ?? {}, pod: template.spec };
    });
}

/** Containers of the gateway's image, each with its role and workload. */
export function gatewayContainers(objects: readonly K8sObject[]): { workload: Workload; container: Container; role: Role; init: boolean }[] {
  return workloads(objects).flatMap((workload) => [
    ...workload.pod.containers.map((container) => ({ workload, container, init: false })),
    ...(workload.pod.initContainers ?? []).map((container) => ({ workload, container, init: true })),
  ].flatMap((c) => {
    const role = roleOf(c.container);
    return role === null ? [] : [{ ...c, role }];
  }));
}

function roleOf(container: Container): Role | null {
  return roleOfCommand([...(container.command ?? []), ...(container.args ?? [])]);
}

/** The workload whose pods run a role's main container. */
export function workloadOf(objects: readonly K8sObject[], role: Role): Workload | undefined {
  return gatewayContainers(objects).find((c) => c.role === role && !c.init)?.workload;
}

function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && meta(o).name === name);
}

/** Keys of a rendered ConfigMap or Secret, or of an example Secret; null when there is none. */
function keysOf(objects: readonly K8sObject[], examples: readonly K8sObject[], kind: 'ConfigMap' | 'Secret', name: string): Map<string, string | undefined> | null {
  const obj = find(objects, kind, name) ?? (kind === 'Secret' ? find(examples, kind, name) : undefined);
  if (obj === undefined) return null;
  const keys = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries((obj.data ?? {}) as Record<string, string>)) {
    keys.set(key, kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value);
  }
  for (const [key, value] of Object.entries((obj.stringData ?? {}) as Record<string, string>)) keys.set(key, value);
  return keys;
}

/** The variables a container gets, with their values where the manifests hold them. */
export function containerEnv(objects: readonly K8sObject[], examples: readonly K8sObject[], container: Container): Map<string, { value: string | undefined; from: string }> {
  const vars = new Map<string, { value: string | undefined; from: string }>();
  for (const source of container.envFrom ?? []) {
    const [kind, ref] = source.configMapRef ? (['ConfigMap', source.configMapRef] as const) : (['Secret', source.secretRef] as const);
    if (ref === undefined) continue;
    for (const [key, value] of keysOf(objects, examples, kind, ref.name) ?? []) vars.set(key, { value, from: `${kind}/${ref.name}` });
  }
  for (const v of container.env ?? []) {
    const ref = v.valueFrom?.secretKeyRef ?? v.valueFrom?.configMapKeyRef;
    const kind = v.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    vars.set(v.name, { value: ref ? keysOf(objects, examples, kind, ref.name)?.get(ref.key) : v.value, from: ref ? `${kind}/${ref.name}` : 'env' });
  }
  return vars;
}

// --- the checks ------------------------------------------------------------------------------

/** Every ConfigMap and Secret a pod names exists (rendered, or as an example Secret) with the keys it reads. */
export function checkReferences(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(objects)) {
    const where = `${w.kind}/${w.name}`;
    for (const c of [...w.pod.containers, ...(w.pod.initContainers ?? [])]) {
      for (const source of c.envFrom ?? []) {
        const [kind, ref] = source.configMapRef ? (['ConfigMap', source.configMapRef] as const) : (['Secret', source.secretRef] as const);
        if (ref && !ref.optional && keysOf(objects, examples, kind, ref.name) === null) problems.push(`${where} ${c.name}: envFrom names ${kind} ${ref.name}, which does not exist`);
      }
      for (const v of c.env ?? []) {
        const ref = v.valueFrom?.secretKeyRef ?? v.valueFrom?.configMapKeyRef;
        if (!ref || ref.optional) continue;
        const kind = v.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
        const keys = keysOf(objects, examples, kind, ref.name);
        if (keys === null) problems.push(`${where} ${c.name}: ${v.name} reads ${kind} ${ref.name}, which does not exist`);
        else if (!keys.has(ref.key)) problems.push(`${where} ${c.name}: ${v.name} reads key ${ref.key} that ${kind} ${ref.name} does not have`);
      }
      for (const m of c.volumeMounts ?? []) {
        if (!(w.pod.volumes ?? []).some((v) => v.name === m.name)) problems.push(`${where} ${c.name}: mounts volume ${m.name}, which the pod does not have`);
      }
    }
    for (const v of w.pod.volumes ?? []) {
      if (v.configMap && !v.configMap.optional && !find(objects, 'ConfigMap', v.configMap.name)) problems.push(`${where}: volume ${v.name} names ConfigMap ${v.configMap.name}, which does not exist`);
      if (v.secret && !v.secret.optional && keysOf(objects, examples, 'Secret', v.secret.secretName) === null) problems.push(`${where}: volume ${v.name} names Secret ${v.secret.secretName}, which does not exist`);
    }
  }
  return problems;
}

function resolvePort(container: Container, port: string | number): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Probes: readiness on /readyz, liveness (and start-up, if any) on /healthz, at a port and path the role's code serves. */
export function checkProbes(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const { workload, container, role, init } of gatewayContainers(objects)) {
    if (init) continue;
    const where = `${workload.kind}/${workload.name} ${container.name}`;
    const env = containerEnv(objects, examples, container);
    const values = new Map([...env].map(([name, v]) => [name, v.value]));
    const listeners = LISTENERS[role].map((l) => ({ ...l, port: listenerPort(l.variable, values) }));
    for (const p of container.ports ?? []) {
      if (!listeners.some((l) => l.port === p.containerPort)) problems.push(`${where}: declares port ${p.containerPort}, on which the ${role} does not listen`);
    }
    for (const [kind, expected] of [['readinessProbe', '/readyz'], ['livenessProbe', '/healthz'], ['startupProbe', '/healthz']] as const) {
      const get = container[kind]?.httpGet;
      if (!get) {
        if (kind !== 'startupProbe' || container[kind] !== undefined) problems.push(`${where}: no ${kind} over HTTP`);
        continue;
      }
      if (get.path !== expected) problems.push(`${where}: ${kind} asks ${String(get.path)}, not ${expected}`);
      const port = resolvePort(container, get.port);
      const listener = listeners.find((l) => l.port === port);
      if (listener === undefined) problems.push(`${where}: ${kind} port ${String(get.port)} is not a port the ${role} listens on`);
      else if (get.path !== undefined && !serves(listener.source, get.path)) problems.push(`${where}: ${kind} path ${get.path} is not served on ${listener.variable}`);
    }
  }
  return problems;
}

/** Every variable a gateway container gets is one the code reads; each role gets what it needs, and no credential it does not use. */
export function checkEnv(objects: readonly K8sObject[], examples: readonly K8sObject[], documented: ReadonlySet<string>, providerVariables: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const known = new Set(documented);
  for (const { workload, container, role } of gatewayContainers(objects)) {
    const where = `${workload.kind}/${workload.name} ${container.name}`;
    const env = containerEnv(objects, examples, container);
    for (const [name, { from }] of env) {
      if (!known.has(name) && !(role === 'proxy' && providerVariables.has(name))) problems.push(`${where}: ${name} (from ${from}) is not a variable the gateway reads`);
    }
    for (const name of REQUIRED[role]) if (!env.has(name)) problems.push(`${where}: the ${role} needs ${name}`);
    for (const name of FORBIDDEN[role]) if (env.has(name)) problems.push(`${where}: the ${role} must not be given ${name}`);
  }
  return problems;
}

function preStopSeconds(container: Container): number {
  const argv = container.lifecycle?.preStop?.exec?.command ?? [];
  return argv[0] === 'sleep' ? Number(argv[1]) : 0;
}

/** The grace period covers the preStop sleep, the drain and the flush, so nobody is killed mid-drain. */
export function checkGrace(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const { workload, container, role, init } of gatewayContainers(objects)) {
    if (init) continue;
    const graceMs = (workload.pod.terminationGracePeriodSeconds ?? 30) * 1000;
    const drainMs = role === 'proxy' ? Number(containerEnv(objects, examples, container).get('DRAIN_TIMEOUT_MS')?.value ?? DEFAULT_DRAIN_MS) : role === 'writer' ? WRITER_CLOSE_MS : 0;
    const needed = preStopSeconds(container) * 1000 + drainMs + FLUSH_MARGIN_MS;
    if (graceMs < needed) problems.push(`${workload.kind}/${workload.name}: terminationGracePeriodSeconds ${graceMs / 1000} is shorter than preStop + drain + flush (${needed / 1000} s)`);
  }
  return problems;
}

/** One HorizontalPodAutoscaler, on the proxy's Deployment, scaling on CPU the pods request. */
export function checkAutoscaler(objects: readonly K8sObject[]): string[] {
  const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
  const proxy = workloadOf(objects, 'proxy');
  if (proxy === undefined) return ['no workload runs the proxy'];
  if (hpas.length === 0) return ['no HorizontalPodAutoscaler'];
  const problems: string[] = [];
  for (const hpa of hpas) {
    const s = spec<{ scaleTargetRef: { apiVersion?: string; kind: string; name: string }; minReplicas?: number; maxReplicas: number }>(hpa);
    const target = s.scaleTargetRef;
    if (hpa.apiVersion !== 'autoscaling/v2') problems.push(`${objectName(hpa)}: apiVersion ${String(hpa.apiVersion)}, not autoscaling/v2`);
    if (target.kind !== proxy.kind || target.name !== proxy.name || target.apiVersion !== 'apps/v1') problems.push(`${objectName(hpa)}: scales ${target.kind}/${target.name}, not the proxy's ${proxy.kind}/${proxy.name}`);
    if ((s.minReplicas ?? 1) > s.maxReplicas) problems.push(`${objectName(hpa)}: minReplicas above maxReplicas`);
  }
  for (const c of proxy.pod.containers) if (c.resources?.requests?.cpu === undefined) problems.push(`${proxy.kind}/${proxy.name} ${c.name}: no CPU request, which a CPU utilization target needs`);
  return problems;
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** PodDisruptionBudgets and Services select pods of a workload; each gateway workload has a budget. */
export function checkSelectors(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  const all = workloads(objects);
  for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
    const selector = spec<{ selector?: { matchLabels?: Record<string, string> } }>(pdb).selector?.matchLabels ?? {};
    const matched = all.filter((w) => selects(selector, w.labels));
    if (matched.length !== 1) problems.push(`${objectName(pdb)}: selects the pods of ${matched.length} workloads, not one`);
  }
  for (const w of all) {
    const own = spec<{ selector?: { matchLabels?: Record<string, string> } }>(find(objects, w.kind, w.name) as K8sObject).selector?.matchLabels ?? {};
    if (!selects(own, w.labels)) problems.push(`${w.kind}/${w.name}: its selector does not match its pod labels`);
  }
  for (const role of ['proxy', 'control-plane', 'writer'] as const) {
    const w = workloadOf(objects, role);
    if (w === undefined) problems.push(`no workload runs the ${role}`);
    else if (!objects.some((o) => o.kind === 'PodDisruptionBudget' && selects(spec<{ selector?: { matchLabels?: Record<string, string> } }>(o).selector?.matchLabels ?? {}, w.labels))) problems.push(`${w.kind}/${w.name}: no PodDisruptionBudget`);
  }
  for (const svc of objects.filter((o) => o.kind === 'Service')) {
    const s = spec<{ selector?: Record<string, string>; ports?: { port: number; targetPort?: string | number }[] }>(svc);
    const matched = all.filter((w) => selects(s.selector ?? {}, w.labels));
    if (matched.length === 0) {
      problems.push(`${objectName(svc)}: selects no pods`);
      continue;
    }
    for (const p of s.ports ?? []) {
      const target = p.targetPort ?? p.port;
      for (const w of matched) {
        if (!w.pod.containers.some((c) => resolvePort(c, target) !== undefined && (typeof target === 'string' || c.ports?.some((cp) => cp.containerPort === target)))) {
          problems.push(`${objectName(svc)}: port ${p.port} targets ${String(target)}, which ${w.kind}/${w.name} does not declare`);
        }
      }
    }
  }
  for (const role of ['proxy', 'control-plane'] as const) {
    const w = workloadOf(objects, role);
    if (w && !objects.some((o) => o.kind === 'Service' && selects(spec<{ selector?: Record<string, string> }>(o).selector ?? {}, w.labels))) problems.push(`${w.kind}/${w.name}: no Service`);
  }
  return problems;
}

/** Non-root, no privilege escalation, a read-only root filesystem. */
export function checkSecurity(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(objects)) {
    const podNonRoot = w.pod.securityContext?.runAsNonRoot === true;
    for (const c of [...w.pod.containers, ...(w.pod.initContainers ?? [])]) {
      const where = `${w.kind}/${w.name} ${c.name}`;
      if (!podNonRoot && c.securityContext?.runAsNonRoot !== true) problems.push(`${where}: may run as root`);
      if (c.securityContext?.allowPrivilegeEscalation !== false) problems.push(`${where}: allows privilege escalation`);
      if (c.securityContext?.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem is writable`);
    }
  }
  return problems;
}

/** Prometheus scrape annotations name the port where the role serves /metrics. */
export function checkScrape(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const { workload, container, role, init } of gatewayContainers(objects)) {
    if (init) continue;
    const where = `${workload.kind}/${workload.name}`;
    const a = workload.annotations;
    if (a['prometheus.io/scrape'] !== 'true') {
      problems.push(`${where}: no prometheus.io/scrape annotation`);
      continue;
    }
    const values = new Map([...containerEnv(objects, examples, container)].map(([name, v]) => [name, v.value]));
    const listener = LISTENERS[role].find((l) => listenerPort(l.variable, values) === Number(a['prometheus.io/port']));
    const path = a['prometheus.io/path'] ?? '/metrics';
    if (listener === undefined) problems.push(`${where}: prometheus.io/port ${String(a['prometheus.io/port'])} is not a port the ${role} listens on`);
    else if (!serves(listener.source, path) || path !== '/metrics') problems.push(`${where}: ${path} on ${listener.variable} does not serve metrics`);
  }
  return problems;
}

function cpuCores(quantity: string | number | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const text = String(quantity);
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

/** PROXY_WORKERS matches the proxy's CPU limit: one data plane per core it may use. */
export function checkWorkers(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const { workload, container, role, init } of gatewayContainers(objects)) {
    if (role !== 'proxy' || init) continue;
    const workers = Number(containerEnv(objects, examples, container).get('PROXY_WORKERS')?.value);
    const limit = cpuCores(container.resources?.limits?.cpu);
    if (limit === undefined) problems.push(`${workload.kind}/${workload.name}: no CPU limit for PROXY_WORKERS to match`);
    else if (workers !== Math.max(1, Math.floor(limit))) problems.push(`${workload.kind}/${workload.name}: PROXY_WORKERS ${workers} for a CPU limit of ${limit}`);
  }
  return problems;
}

/**
 * The providers file is mounted where GATEWAY_CONFIG points, from a rendered ConfigMap; returns
 * its text (or the problems).
 */
export function providersFile(objects: readonly K8sObject[], examples: readonly K8sObject[]): { text: string } | { problems: string[] } {
  const proxy = gatewayContainers(objects).find((c) => c.role === 'proxy' && !c.init);
  if (proxy === undefined) return { problems: ['no workload runs the proxy'] };
  const where = `${proxy.workload.kind}/${proxy.workload.name} ${proxy.container.name}`;
  const path = containerEnv(objects, examples, proxy.container).get('GATEWAY_CONFIG')?.value;
  if (path === undefined) return { problems: [`${where}: no GATEWAY_CONFIG`] };
  for (const m of proxy.container.volumeMounts ?? []) {
    const prefix = m.mountPath.endsWith('/') ? m.mountPath : `${m.mountPath}/`;
    if (!path.startsWith(prefix)) continue;
    const volume = (proxy.workload.pod.volumes ?? []).find((v) => v.name === m.name);
    const configMap = volume?.configMap && find(objects, 'ConfigMap', volume.configMap.name);
    const text = configMap && (configMap.data as Record<string, string> | undefined)?.[path.slice(prefix.length)];
    if (typeof text === 'string') return { text };
    return { problems: [`${where}: GATEWAY_CONFIG ${path} is not a file of the ConfigMap mounted at ${m.mountPath}`] };
  }
  return { problems: [`${where}: nothing is mounted at GATEWAY_CONFIG ${path}`] };
}

/**
 * The proxies reach the control plane's invalidation stream: CONTROL_PLANE_URL names a Service of
 * the control plane's pods at a port that reaches its listener, and both sides read INTERNAL_TOKEN
 * from the same Secret key.
 */
export function checkInternalChannel(objects: readonly K8sObject[], examples: readonly K8sObject[]): string[] {
  const proxy = gatewayContainers(objects).find((c) => c.role === 'proxy' && !c.init);
  const control = gatewayContainers(objects).find((c) => c.role === 'control-plane' && !c.init);
  if (proxy === undefined || control === undefined) return ['no proxy or no control plane'];
  const problems: string[] = [];
  const proxyEnv = containerEnv(objects, examples, proxy.container);
  const url = proxyEnv.get('CONTROL_PLANE_URL')?.value;
  const parsed = url === undefined ? null : URL.canParse(url) ? new URL(url) : null;
  if (parsed === null) return [`${proxy.workload.kind}/${proxy.workload.name}: CONTROL_PLANE_URL ${String(url)} is not a URL`];
  const host = parsed.hostname.split('.')[0];
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  const svc = objects.find((o) => o.kind === 'Service' && meta(o).name === host);
  const s = svc && spec<{ selector?: Record<string, string>; ports?: { port: number; targetPort?: string | number }[] }>(svc);
  const servicePort = s?.ports?.find((p) => p.port === port);
  const controlValues = new Map([...containerEnv(objects, examples, control.container)].map(([name, v]) => [name, v.value]));
  const controlPort = listenerPort('CONTROL_PORT', controlValues);
  if (s === undefined || !selects(s.selector ?? {}, control.workload.labels)) problems.push(`CONTROL_PLANE_URL ${url}: no Service ${host} of the control plane's pods`);
  else if (servicePort === undefined || resolvePort(control.container, servicePort.targetPort ?? servicePort.port) !== controlPort) problems.push(`CONTROL_PLANE_URL ${url}: port ${port} of Service ${host} does not reach the control plane's port ${controlPort}`);
  const tokenRef = (c: Container) => {
    const ref = c.env?.find((v) => v.name === 'INTERNAL_TOKEN')?.valueFrom?.secretKeyRef;
    return ref ? `${ref.name}/${ref.key}` : 'not from a Secret';
  };
  if (tokenRef(proxy.container) !== tokenRef(control.container) || tokenRef(proxy.container) === 'not from a Secret') {
    problems.push(`INTERNAL_TOKEN: the proxy reads ${tokenRef(proxy.container)}, the control plane ${tokenRef(control.container)}`);
  }
  return problems;
}
