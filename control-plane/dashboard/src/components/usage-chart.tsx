import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatCompact } from '../lib/format.js';
import { describeBucket, describeSeries, type UsageSeries } from '../lib/usage-series.js';

/**
 * Tokens over time, one line per model, drawn by uPlot on a canvas (about 50 kB minified, and
 * fast with thousands of points). Colours come from the Okabe–Ito set, which stays distinct for
 * the common kinds of colour blindness, and each line also gets its own dash pattern. The canvas
 * is one image to screen readers, labelled with a sentence; the totals table beside it has the
 * figures.
 */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES: number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
const HEIGHT = 260;

function busyIndexes(values: ArrayLike<number | null | undefined> | undefined): number[] {
  const busy: number[] = [];
  for (let i = 0; i < (values?.length ?? 0); i++) if (values![i]) busy.push(i);
  return busy;
}

export function UsageChart({ series }: { series: UsageSeries }) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = container.current;
    if (el === null) return;
    const data: uPlot.AlignedData = [series.starts.map((ms) => ms / 1000), ...series.values];
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
        series: [
          { label: 'Time' },
          ...series.models.map((model, i) => ({
            label: model,
            stroke: COLOURS[i % COLOURS.length],
            dash: DASHES[i % DASHES.length],
            width: 2,
            // Dots only where the model had traffic: a ring on every empty bucket is noise.
            points: { show: true, size: 6, filter: (u: uPlot, seriesIdx: number) => busyIndexes(u.data[seriesIdx]) },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${formatCompact(v)} tokens`),
          })),
        ],
        axes: [{}, { size: 56, values: (_u, ticks) => ticks.map((t) => formatCompact(t)) }],
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
  }, [series]);

  return (
    <figure class="chart">
      <figcaption>Total tokens per {describeBucket(series.bucketMs)}, by model</figcaption>
      <div class="chart-canvas" ref={container} role="img" aria-label={describeSeries(series)} />
    </figure>
  );
}
