import { readFileSync } from 'node:fs';

/**
 * Reads a V8 .cpuprofile (from node --cpu-prof) and ranks where the process was busy: functions
 * by self time, functions by inclusive time (themselves and what they called), and files or
 * packages by self time. Percentages are of busy time (idle samples left out), since a process
 * that waits for load most of its life would otherwise show everything as small.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  busyPercent: number;
  ms: number;
}

export interface ProfileSummary {
  sampledMs: number;
  busyMs: number;
  self: ProfileLine[];
  inclusive: ProfileLine[];
  places: ProfileLine[];
}

const NOT_WORK = new Set(['(idle)', '(root)']);

function where(url: string): string {
  if (url === '') return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  return dist === -1 ? url.replace(/^file:\/\//, '') : url.slice(url.lastIndexOf('/', dist - 1) + 1);
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${where(url)}${url ? `:${lineNumber + 1}` : ''}`;
}

export function summariseProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const place = new Map<string, number>();
  let sampled = 0;
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    sampled += dt;
    const node = byId.get(id);
    if (node === undefined || NOT_WORK.has(node.callFrame.functionName)) return;
    busy += dt;
    const name = label(node);
    self.set(name, (self.get(name) ?? 0) + dt);
    const fn = node.callFrame.functionName;
    const bucket = fn === '(garbage collector)' || fn === '(program)' ? fn : where(node.callFrame.url);
    place.set(bucket, (place.get(bucket) ?? 0) + dt);
    // Each function counts once per sample however deep its recursion.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (n === undefined || NOT_WORK.has(n.callFrame.functionName)) continue;
      const l = label(n);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
    }
  });
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, busyPercent: (100 * us) / Math.max(busy, 1), ms: us / 1000 }));
  return { sampledMs: sampled / 1000, busyMs: busy / 1000, self: rank(self), inclusive: rank(inclusive), places: rank(place) };
}

export function formatProfile(file: string, top = 25): string {
  const s = summariseProfile(file, top);
  const line = (l: ProfileLine) => `${l.busyPercent.toFixed(1).padStart(5)}%  ${l.ms.toFixed(0).padStart(7)} ms  ${l.name}`;
  return [
    `${file}: ${(s.sampledMs / 1000).toFixed(1)} s sampled, ${(s.busyMs / 1000).toFixed(1)} s busy (percentages are of busy time)`,
    'self time by function:',
    ...s.self.map(line),
    'inclusive time by function:',
    ...s.inclusive.map(line),
    'self time by file or package:',
    ...s.places.map(line),
  ].join('\n');
}
