import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatCompact, formatDateTime, formatTickTime } from '../lib/format.js';
import { describeBucket, describeSeries, type UsageSeries } from '../lib/usage-series.js';

/**
 * Tokens over time, one line per model, drawn by uPlot on a canvas (about 50 kB minified, and
 * fast with thousands of points). Colours come from the Okabe–Ito set, which stays distinct for
 * the common kinds of colour blindness, and each line also gets its own dash pattern. The canvas
 * is one image to screen readers, labelled with a sentence; the totals table beside it has the
 * figures.
 */
// The set's black is the theme's text colour, so it shows on a dark background too.
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', 'var(--text)'];
const DASHES: number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
const HEIGHT = 260;

function busyIndexes(values: ArrayLike<number | null | undefined> | undefined): number[] {
  const busy: number[] = [];
  for (let i = 0; i < (values?.length ?? 0); i++) if (values![i]) busy.push(i);
  return busy;
}

/** The theme's colours for axes and grid, read from the page so a dark theme gets light axes. */
function themeColours(el: HTMLElement): { text: string; grid: string; ink: string } {
  const style = getComputedStyle(el);
  const read = (name: string) => style.getPropertyValue(name).trim() || 'gray';
  return { text: read('--muted'), grid: read('--border'), ink: read('--text') };
}

/** Bumps when the system switches between light and dark, so the chart redraws in the new colours. */
function useColourScheme(): number {
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const query = window.matchMedia('(prefers-color-scheme: dark)');
    const changed = () => setGeneration((g) => g + 1);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return generation;
}

export function UsageChart({ series }: { series: UsageSeries }) {
  const container = useRef<HTMLDivElement>(null);
  const scheme = useColourScheme();

  useEffect(() => {
    const el = container.current;
    if (el === null) return;
    const theme = themeColours(el);
    const data: uPlot.AlignedData = [series.starts.map((ms) => ms / 1000), ...series.values];
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
        series: [
          { label: 'Time', value: (_u: uPlot, v: number | null) => (v === null ? '—' : formatDateTime(v * 1000)) },
          ...series.models.map((model, i) => ({
            label: model,
            stroke: (COLOURS[i % COLOURS.length] as string).startsWith('var(') ? theme.ink : COLOURS[i % COLOURS.length],
            dash: DASHES[i % DASHES.length],
            width: 2,
            // Dots only where the model had traffic: a ring on every empty bucket is noise.
            points: { show: true, size: 6, filter: (u: uPlot, seriesIdx: number) => busyIndexes(u.data[seriesIdx]) },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${formatCompact(v)} tokens`),
          })),
        ],
        axes: [
          {
            stroke: theme.text,
            grid: { stroke: theme.grid, width: 1 },
            ticks: { stroke: theme.grid, width: 1 },
            // Room for a "2026-11-23" label between ticks.
            space: 90,
            values: (_u, ticks, _axis, _space, incr) => ticks.map((t) => formatTickTime(t * 1000, incr * 1000)),
          },
          { size: 56, stroke: theme.text, grid: { stroke: theme.grid, width: 1 }, ticks: { stroke: theme.grid, width: 1 }, values: (_u, ticks) => ticks.map((t) => formatCompact(t)) },
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
