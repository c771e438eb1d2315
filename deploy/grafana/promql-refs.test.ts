import { describe, expect, it } from 'vitest';
import { promqlRefs, variableQueryRefs } from './promql-refs.js';

const metrics = (expr: string) => promqlRefs(expr).selectors.map((s) => s.metric);

describe('promqlRefs', () => {
  it('finds the bucket series under histogram_quantile, not the function, the grouping or the variables', () => {
    const refs = promqlRefs('histogram_quantile(0.95, sum by (provider, le) (rate(gateway_upstream_duration_seconds_bucket{job=~"$job", instance=~"$instance"}[$__rate_interval])))');
    expect(refs.selectors).toEqual([{ metric: 'gateway_upstream_duration_seconds_bucket', labels: ['job', 'instance'] }]);
    expect(refs.grouping).toEqual(['provider', 'le']);
    expect(refs.aggregates).toBe(true);
  });

  it('finds bare metric names on both sides of binary operators and set operators', () => {
    expect(metrics('max(gateway_writer_queue_depth) > 0 and sum(rate(gateway_writer_batches_total[5m])) == 0')).toEqual([
      'gateway_writer_queue_depth',
      'gateway_writer_batches_total',
    ]);
    expect(metrics('gateway_writer_postgres_up == bool 0 unless on (instance) up offset 5m')).toEqual(['gateway_writer_postgres_up', 'up']);
  });

  it('leaves out label values, durations, numbers and subquery ranges', () => {
    const refs = promqlRefs('deriv(max(gateway_writer_queue_depth{state="waiting"})[15m:1m]) > 1e3 or vector(0)');
    expect(refs.selectors).toEqual([{ metric: 'gateway_writer_queue_depth', labels: ['state'] }]);
  });

  it('reads every name of a __name__ alternation, with the other matchers', () => {
    expect(promqlRefs('{__name__=~"a_total|b_seconds", job="x"}').selectors).toEqual([
      { metric: 'a_total', labels: ['job'] },
      { metric: 'b_seconds', labels: ['job'] },
    ]);
    expect(() => promqlRefs('{__name__=~"gateway_.*"}')).toThrow(/plain alternation/);
    expect(() => promqlRefs('{job="x"}')).toThrow(/without a metric name/);
  });

  it('collects on/ignoring/group_left labels and treats an aggregation before `by` as a function', () => {
    const refs = promqlRefs('sum without (worker) (a) / on (provider) group_left (model) count by (provider) (b)');
    expect(refs.grouping).toEqual(['worker', 'provider', 'model', 'provider']);
    expect(metrics('sum without (worker) (a) / on (provider) group_left (model) count by (provider) (b)')).toEqual(['a', 'b']);
  });

  it('refuses what it cannot read instead of skipping it', () => {
    expect(() => promqlRefs('histogram_quantil(0.9, x_bucket)')).toThrow(/unknown PromQL function histogram_quantil/);
    expect(() => promqlRefs('sum(rate(x[5m])')).toThrow(/unbalanced/);
    expect(() => promqlRefs('x{job="a"')).toThrow(/malformed/);
    expect(() => promqlRefs('rate(x[five])')).toThrow(/malformed range/);
    expect(() => promqlRefs('1 + 1')).toThrow(/no metric/);
  });
});

describe('variableQueryRefs', () => {
  it('reads the selector of label_values and the label it lists', () => {
    expect(variableQueryRefs('label_values(gateway_requests_total{job=~"$job"}, instance)')).toEqual({
      selectors: [{ metric: 'gateway_requests_total', labels: ['job'] }],
      grouping: [],
      aggregates: false,
      label: 'instance',
    });
    expect(variableQueryRefs('label_values(job)').selectors).toEqual([]);
  });
});
