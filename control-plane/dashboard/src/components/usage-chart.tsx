import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatCompact, formatDateTime, formatTickTime } from '../lib/format.js';
import { lineStyle } from '../lib/chart-lines.js';
import { describeBucket, describeSeries, type UsageSeries } from '../lib/usage-series.js';

/**
 * Tokens over time, one line per model, drawn by uPlot on a canvas (about 50 kB minified, and
 * fast with thousands of points). Colours come from the Okabe–Ito set, which stays distinct for
 * the common kinds of colour blindness; each line also gets its own dash pattern and a width that
 * keeps equal lines from hiding each other (chart-lines.ts). The canvas
 * cannot read CSS, so the colours are read from the stylesheet's variables (--chart-1…7 for the
 * lines, --muted and --border for axes and grid) and the chart is drawn again when the system
 * switches between light and dark. The canvas
 * is one image to screen readers, labelled with a sentence; the totals table beside it has the
 * figures.
 */
const CHART_VARIABLES = 7;
const HEIGHT = 260;

function busyIndexes(values: ArrayLike<number | null | undefined> | undefined): number[] {
  const busy: number[] = [];
  for (let i = 0; i < (values?.length ?? 0); i++) if (values![i]) busy.push(i);
  return busy;
}

interface ChartColours {
  lines: string[];
  text: string;
  grid: string;
}

function chartColours(): ChartColours {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string) => style.getPropertyValue(name).trim();
  return {
    lines: Array.from({ length: CHART_VARIABLES }, (_, i) => read(`--chart-${i + 1}`)),
    text: read('--muted'),
    grid: read('--border'),
  };
}

/** The colour scheme in force, so the chart redraws when it changes. */
function useColourScheme(): 'light' | 'dark' {
  const query = window.matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const changed = () => setDark(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return dark ? 'dark' : 'light';
}

export function UsageChart({ series }: { series: UsageSeries }) {
  const container = useRef<HTMLDivElement>(null);
  const scheme = useColourScheme();

  useEffect(() => {
    const el = container.current;
    if (el === null) return;
    const colours = chartColours();
    const axis = { stroke: colours.text, grid: { stroke: colours.grid, width: 1 }, ticks: { stroke: colours.grid, width: 1 } };
    const data: uPlot.AlignedData = [series.starts.map((ms) => ms / 1000), ...series.values];
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
        series: [
          { label: 'Time', value: (_u: uPlot, v: number | null) => (v === null ? '—' : formatDateTime(v * 1000)) },
          ...series.models.map((model, i) => {
            const style = lineStyle(i, series.models.length);
            return {
              label: model,
              stroke: colours.lines[i % colours.lines.length],
              dash: style.dash,
              width: style.width,
              // Dots only where the model had traffic: a ring on every empty bucket is noise.
              points: { show: true, size: style.pointSize, filter: (u: uPlot, seriesIdx: number) => busyIndexes(u.data[seriesIdx]) },
              value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${formatCompact(v)} tokens`),
            };
          }),
        ],
        axes: [
          {
            ...axis,
            // Room for a "2026-11-23" label between ticks.
            space: 90,
            values: (_u, ticks, _axis, _space, incr) => ticks.map((t) => formatTickTime(t * 1000, incr * 1000)),
          },
          { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => formatCompact(t)) },
        ],
        legend: { show: true, live: true },
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [series, scheme]);

  return (
    <figure class="chart">
      <figcaption>Total tokens per {describeBucket(series.bucketMs)}, by model</figcaption>
      <div class="chart-canvas" ref={container} role="img" aria-label={describeSeries(series)} />
    </figure>
  );
}
