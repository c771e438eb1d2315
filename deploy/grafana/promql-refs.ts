/**
 * What a PromQL expression refers to: the metric names it selects (with the labels each selector
 * matches on) and the labels it groups or matches by. Enough of PromQL to check dashboards and
 * alert rules against what the services export, not an evaluator. Grafana's `$variables` are
 * accepted where PromQL takes a duration or a value. Anything it does not understand (an unknown
 * function, an unbalanced bracket, a selector with no metric name) throws, so a typo cannot pass
 * for a metric name or be skipped.
 */
export interface Selector {
  metric: string;
  /** Label names the selector matches on (`__name__` left out). */
  labels: string[];
}

export interface PromqlRefs {
  selectors: Selector[];
  /** Labels named by `by`, `without`, `on`, `ignoring`, `group_left`, `group_right`. */
  grouping: string[];
  /** Whether the expression aggregates (then only grouped labels survive). */
  aggregates: boolean;
}

const AGGREGATIONS = new Set([
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio',
]);

const FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atanh', 'avg_over_time', 'ceil', 'changes', 'clamp',
  'clamp_max', 'clamp_min', 'cos', 'cosh', 'count_over_time', 'day_of_month', 'day_of_week', 'day_of_year', 'days_in_month', 'deg', 'delta',
  'deriv', 'double_exponential_smoothing', 'end', 'exp', 'floor', 'histogram_avg', 'histogram_count', 'histogram_fraction',
  'histogram_quantile', 'histogram_stddev', 'histogram_stdvar', 'histogram_sum', 'holt_winters', 'hour', 'idelta', 'increase', 'info',
  'irate', 'label_join', 'label_replace', 'last_over_time', 'ln', 'log10', 'log2', 'mad_over_time', 'max_over_time', 'min_over_time',
  'minute', 'month', 'pi', 'predict_linear', 'present_over_time', 'quantile_over_time', 'rad', 'rate', 'resets', 'round', 'scalar', 'sgn',
  'sin', 'sinh', 'sort', 'sort_by_label', 'sort_by_label_desc', 'sort_desc', 'sqrt', 'start', 'stddev_over_time', 'stdvar_over_time',
  'sum_over_time', 'tan', 'tanh', 'time', 'timestamp', 'vector', 'year',
]);

/** Keywords that take a parenthesised list of label names. */
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Binary operators spelt as words, modifiers and literals: never metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'atan2', 'offset', 'bool', 'inf', 'nan']);

type Token = { kind: 'ident' | 'string' | 'number' | 'var' | 'op' | 'punct'; text: string };

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    const rest = expr.slice(i);
    let m: RegExpExecArray | null;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < expr.length && expr[i] !== '\n') i++;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += c !== '`' && expr[j] === '\\' ? 2 : 1;
      if (j >= expr.length) throw new Error(`unterminated string in: ${expr}`);
      tokens.push({ kind: 'string', text: expr.slice(i + 1, j) });
      i = j + 1;
    } else if ((m = /^\$(\{[^}]*\}|\w+)/.exec(rest)) || (m = /^\[\[\w+\]\]/.exec(rest))) {
      tokens.push({ kind: 'var', text: m[0] });
      i += m[0].length;
    } else if ((m = /^[a-zA-Z_][a-zA-Z0-9_:]*/.exec(rest))) {
      // A leading ':' (legal in recording rule names) is left to the subquery step `[15m:1m]`.
      tokens.push({ kind: 'ident', text: m[0] });
      i += m[0].length;
    } else if ((m = /^(0x[0-9a-fA-F]+|[0-9.][0-9a-zA-Z.]*)/.exec(rest))) {
      // Numbers and durations (0.95, 1e3, 5m, 1h30m).
      tokens.push({ kind: 'number', text: m[0] });
      i += m[0].length;
    } else if ((m = /^(==|!=|=~|!~|>=|<=|[=<>+\-*/%^@:])/.exec(rest))) {
      tokens.push({ kind: 'op', text: m[0] });
      i += m[0].length;
    } else if ('(){}[],'.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else {
      throw new Error(`unexpected character ${JSON.stringify(c)} in: ${expr}`);
    }
  }
  return tokens;
}

/** The metric names a `__name__` matcher selects: one name, or a plain alternation `a|b|c`. */
function namesOf(op: string, value: string, expr: string): string[] {
  if (op === '=') return [value];
  if (op === '=~' && /^[a-zA-Z_:][a-zA-Z0-9_:]*(\|[a-zA-Z_:][a-zA-Z0-9_:]*)*$/.test(value)) return value.split('|');
  throw new Error(`__name__${op}"${value}" is not a name or a plain alternation of names, in: ${expr}`);
}

export function promqlRefs(expr: string): PromqlRefs {
  const tokens = tokenize(expr);
  const refs: PromqlRefs = { selectors: [], grouping: [], aggregates: false };
  const at = (i: number) => tokens[i];
  const isPunct = (i: number, text: string) => at(i)?.kind === 'punct' && at(i)?.text === text;
  let depth = 0;

  /** Parses `{ label op "value", … }` from the `{` at i; returns the index after the `}`. */
  const matchers = (i: number, into: { labels: string[]; names: string[] }): number => {
    i++;
    for (;;) {
      if (isPunct(i, '}')) return i + 1;
      const label = at(i);
      const op = at(i + 1);
      const value = at(i + 2);
      if (label?.kind !== 'ident' || op?.kind !== 'op' || !['=', '!=', '=~', '!~'].includes(op.text) || value?.kind !== 'string') {
        throw new Error(`malformed label matcher in: ${expr}`);
      }
      if (label.text === '__name__') into.names.push(...namesOf(op.text, value.text, expr));
      else into.labels.push(label.text);
      i += 3;
      if (isPunct(i, ',')) i++;
      else if (!isPunct(i, '}')) throw new Error(`malformed label matchers in: ${expr}`);
    }
  };

  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    if (t.kind === 'ident') {
      const word = t.text.toLowerCase();
      if (GROUPING.has(word)) {
        i++;
        if (isPunct(i, '(')) {
          i++;
          while (!isPunct(i, ')')) {
            const label = at(i);
            if (label?.kind === 'ident') refs.grouping.push(label.text);
            else if (!isPunct(i, ',')) throw new Error(`malformed label list after ${word} in: ${expr}`);
            i++;
          }
          i++;
        }
        continue;
      }
      if (KEYWORDS.has(word)) {
        i++;
        continue;
      }
      const next = at(i + 1);
      const calls = next?.kind === 'punct' && next.text === '(';
      if (AGGREGATIONS.has(t.text) && (calls || (next?.kind === 'ident' && GROUPING.has(next.text.toLowerCase())))) {
        refs.aggregates = true;
        i++;
        continue;
      }
      if (calls) {
        if (!FUNCTIONS.has(t.text)) throw new Error(`unknown PromQL function ${t.text}() in: ${expr}`);
        i++;
        continue;
      }
      const found = { labels: [] as string[], names: [] as string[] };
      i = isPunct(i + 1, '{') ? matchers(i + 1, found) : i + 1;
      if (found.names.length > 0) throw new Error(`a selector names its metric twice in: ${expr}`);
      refs.selectors.push({ metric: t.text, labels: found.labels });
      continue;
    }
    if (isPunct(i, '{')) {
      const found = { labels: [] as string[], names: [] as string[] };
      i = matchers(i, found);
      if (found.names.length === 0) throw new Error(`a selector without a metric name in: ${expr}`);
      for (const metric of found.names) refs.selectors.push({ metric, labels: found.labels });
      continue;
    }
    if (isPunct(i, '[')) {
      // A range or subquery range: durations, Grafana variables and ':' only.
      i++;
      while (!isPunct(i, ']')) {
        const inner = at(i);
        if (inner === undefined || inner.kind === 'ident' || inner.kind === 'punct') throw new Error(`malformed range in: ${expr}`);
        i++;
      }
      i++;
      continue;
    }
    if (isPunct(i, '(')) depth++;
    if (isPunct(i, ')') && --depth < 0) throw new Error(`unbalanced parentheses in: ${expr}`);
    if (isPunct(i, '}') || isPunct(i, ']')) throw new Error(`unbalanced brackets in: ${expr}`);
    i++;
  }
  if (depth !== 0) throw new Error(`unbalanced parentheses in: ${expr}`);
  if (refs.selectors.length === 0 && !/\bvector\s*\(/.test(expr)) throw new Error(`no metric in: ${expr}`);
  return refs;
}

/**
 * A Grafana Prometheus variable query: `label_values(selector, label)` refers to the selector's
 * metric and the label; `label_values(label)` to no metric; anything else is PromQL.
 */
export function variableQueryRefs(query: string): PromqlRefs & { label?: string } {
  const labelValues = /^\s*label_values\(\s*(?:(.*),\s*)?([a-zA-Z_]\w*)\s*\)\s*$/s.exec(query);
  if (labelValues === null) return promqlRefs(query);
  const [, selector, label] = labelValues;
  if (selector === undefined) return { selectors: [], grouping: [], aggregates: false, label: label! };
  return { ...promqlRefs(selector), label: label! };
}
