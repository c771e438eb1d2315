/**
 * How each line of the usage chart is drawn so that none can hide another. Lines are drawn in
 * order, later over earlier, and two models with the same tokens in every bucket lie on the same
 * pixels: each line is therefore wider than every line drawn after it (and its dots larger), so
 * an earlier line stays visible as a coloured edge around the later ones, and each has its own
 * dash pattern besides its colour.
 */
export interface LineStyle {
  dash: number[];
  width: number;
  pointSize: number;
}

const DASHES: number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
const BASE_WIDTH = 2;
const WIDTH_STEP = 2;
const BASE_POINT = 6;
const POINT_STEP = 4;
/** Past this many lines below it, a line stops growing: seven models must not make a ribbon. */
const MAX_LAYERS = 3;

export function lineStyle(index: number, count: number): LineStyle {
  const above = Math.min(MAX_LAYERS, Math.max(0, count - 1 - index));
  return {
    dash: DASHES[index % DASHES.length] as number[],
    width: BASE_WIDTH + WIDTH_STEP * above,
    pointSize: BASE_POINT + POINT_STEP * above,
  };
}
