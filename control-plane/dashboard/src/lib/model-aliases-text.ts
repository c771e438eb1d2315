/**
 * A project's model aliases (`model_aliases`: the id a client asks for → the id it is served) as
 * the text the settings form edits: one `asked = served` per line, in any order. An empty text is
 * no aliases (null in the API).
 */
const MAX_ALIASES = 1000;
const MAX_ID = 256;

export function aliasesText(aliases: Readonly<Record<string, string>> | null | undefined): string {
  if (aliases === null || aliases === undefined) return '';
  return Object.entries(aliases)
    .map(([asked, served]) => `${asked} = ${served}`)
    .join('\n');
}

export function parseAliasesText(text: string): { ok: true; value: Record<string, string> | null } | { ok: false; problem: string } {
  const aliases: Record<string, string> = {};
  let count = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const at = line.indexOf('=');
    const asked = at < 0 ? '' : line.slice(0, at).trim();
    const served = at < 0 ? '' : line.slice(at + 1).trim();
    if (asked === '' || served === '') return { ok: false, problem: `Line ${i + 1}: write the model asked for, “=”, then the model served.` };
    if (asked.length > MAX_ID || served.length > MAX_ID) return { ok: false, problem: `Line ${i + 1}: a model id has at most ${MAX_ID} characters.` };
    if (Object.hasOwn(aliases, asked)) return { ok: false, problem: `Line ${i + 1}: “${asked}” is already given a model.` };
    if (asked === served) return { ok: false, problem: `Line ${i + 1}: “${asked}” would be served as itself.` };
    aliases[asked] = served;
    if (++count > MAX_ALIASES) return { ok: false, problem: `At most ${MAX_ALIASES} aliases.` };
  }
  return { ok: true, value: count === 0 ? null : aliases };
}

export function sameAliases(a: Readonly<Record<string, string>> | null, b: Readonly<Record<string, string>> | null | undefined): boolean {
  const left = Object.entries(a ?? {});
  const right = b ?? {};
  return left.length === Object.keys(right).length && left.every(([asked, served]) => right[asked] === served);
}
