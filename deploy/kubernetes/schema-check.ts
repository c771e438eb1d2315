import { createRequire } from 'node:module';

/**
 * Checks a Kubernetes object against the API's schemas, offline, with the kubernetes-models
 * package: an unknown apiVersion or kind, a wrong type or a missing required field, and — which
 * the package's schemas do not catch, since they allow properties they do not name — a field the
 * API does not have (a misspelt `readinessProb` would be dropped by a lenient apply).
 */
export type K8sObject = Record<string, unknown> & { apiVersion?: unknown; kind?: unknown };

interface SchemaError {
  instancePath: string;
  message?: string;
}

type ModelClass = new (data: object) => { validate(): void };

const require = createRequire(import.meta.url);

function modelFor(apiVersion: string, kind: string): ModelClass | string {
  // The package's folders are named after apiVersion: `v1`, `apps/v1`, `autoscaling/v2`, …
  if (!/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion)) return `unknown apiVersion ${apiVersion}`;
  let group: Record<string, unknown>;
  try {
    group = require(`kubernetes-models/${apiVersion}`) as Record<string, unknown>;
  } catch {
    return `unknown apiVersion ${apiVersion}`;
  }
  const model = group[kind];
  return typeof model === 'function' ? (model as ModelClass) : `unknown kind ${kind} in ${apiVersion}`;
}

function schemaErrors(model: ModelClass, data: object): SchemaError[] {
  try {
    new model(data).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: SchemaError[] }).errors;
    if (!Array.isArray(errors)) throw err;
    return errors;
  }
}

/** JSON pointer of a path, as the validator reports it. */
function pointer(path: readonly (string | number)[]): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function withValueAt(root: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (Array.isArray(root)) return root.map((item, i) => (i === head ? withValueAt(item, rest, value) : item));
  const obj = root as Record<string, unknown>;
  return { ...obj, [head]: withValueAt(obj[head], rest, value) };
}

/** Paths of every object key in the tree, parents before children. */
function keyPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keyPaths(item, [...path, i]));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => [[...path, key], ...keyPaths(child, [...path, key])]);
}

/** Maps whose keys are names chosen by the author, not API fields. */
const FREE_KEYS = /\/(labels|annotations|matchLabels|data|stringData|binaryData|nodeSelector|requests|limits|capacity|selector)$/;

/**
 * A field is known when the schema has a rule for it: put a value no rule accepts (a symbol) in
 * its place and the validator must complain at exactly that path.
 */
function unknownFields(model: ModelClass, obj: K8sObject): string[] {
  const unknown: string[] = [];
  const poison = Symbol('not a valid value of any type');
  for (const path of keyPaths(obj)) {
    const parent = pointer(path.slice(0, -1));
    if (FREE_KEYS.test(parent) && !(parent.endsWith('/selector') && ['matchLabels', 'matchExpressions'].includes(String(path.at(-1))))) continue;
    if (unknown.some((u) => pointer(path).startsWith(`${u}/`))) continue;
    const at = pointer(path);
    if (!schemaErrors(model, withValueAt(obj, path, poison) as object).some((e) => e.instancePath === at)) unknown.push(at);
  }
  return unknown;
}

/** Every problem with one object, as `Kind/name: message` lines; empty when it is valid. */
export function validateObject(obj: K8sObject): string[] {
  const name = `${String(obj.kind)}/${String((obj.metadata as { name?: unknown } | undefined)?.name)}`;
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return [`${name}: no apiVersion or kind`];
  const model = modelFor(obj.apiVersion, obj.kind);
  if (typeof model === 'string') return [`${name}: ${model}`];
  const errors = schemaErrors(model, obj).map((e) => `${name}: ${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  return [...errors, ...unknownFields(model, obj).map((path) => `${name}: ${path} is not a field of ${obj.kind}`)];
}
