import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { K8sObject } from './schema-check.js';

/** Rendering the overlays with `kubectl kustomize`, and reading what they render. */
export const KUBERNETES_DIR = fileURLToPath(new URL('.', import.meta.url));
export const OVERLAYS = ['dev', 'production'] as const;
export type Overlay = (typeof OVERLAYS)[number];

export function overlayDir(overlay: Overlay): string {
  return join(KUBERNETES_DIR, 'overlays', overlay);
}

export function parseYamlStream(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`YAML: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((obj): obj is K8sObject => obj !== null);
}

export async function renderOverlay(overlay: Overlay): Promise<K8sObject[]> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)('kubectl', ['kustomize', overlayDir(overlay)], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('kubectl is not installed: run test-support/ensure-kubectl.sh');
    throw new Error(`kubectl kustomize ${overlay}: ${e.stderr ?? e.message}`);
  }
  return parseYamlStream(stdout).map(unwrapSecretData);
}

/**
 * kustomize v5 folds long base64 values of a Secret over several lines; the API server's decoder
 * skips the line breaks, the schema's `byte` format does not.
 */
function unwrapSecretData(obj: K8sObject): K8sObject {
  if (obj.kind !== 'Secret' || typeof obj.data !== 'object' || obj.data === null) return obj;
  const data = Object.fromEntries(Object.entries(obj.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
  return { ...obj, data };
}

/**
 * Secrets an overlay expects to exist without holding their values: the overlay's
 * secret.example.yaml (placeholders, outside its kustomization) lists their keys.
 */
export function exampleSecrets(overlay: Overlay): K8sObject[] {
  const file = join(overlayDir(overlay), 'secret.example.yaml');
  return existsSync(file) ? parseYamlStream(readFileSync(file, 'utf8')) : [];
}
