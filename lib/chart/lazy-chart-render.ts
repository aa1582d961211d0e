// Imported with import() by the triage function's chart route, and bundled on its own: only a
// picture's first request parses resvg and reads its WebAssembly and fonts (lib/chart/assets.ts).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import { CHART_ASSETS, type ChartAsset } from './assets.js';
import { CHART_SCALE, noticeSvg, type TrendPicture, trendSvg } from './svg.js';

/** Beside this module in a built function's folder; in its package when run from source. */
function assetPath(file: ChartAsset): string {
  const beside = fileURLToPath(new URL(`./${file}`, import.meta.url));
  if (existsSync(beside)) return beside;
  const from = CHART_ASSETS.find((asset) => asset.file === file)?.from ?? file;
  return createRequire(import.meta.url).resolve(from);
}

let loaded: Promise<Uint8Array[]> | undefined;

/** resvg's WebAssembly compiled and the fonts read, once per container. */
function load(): Promise<Uint8Array[]> {
  loaded ??= (async () => {
    const [wasm, regular, semiBold] = await Promise.all(
      (['resvg.wasm', 'Inter-Regular.ttf', 'Inter-SemiBold.ttf'] as const).map((file) => readFile(assetPath(file))),
    );
    await initWasm(wasm as Uint8Array);
    return [regular as Uint8Array, semiBold as Uint8Array];
  })();
  // A failed load is tried again with the next picture rather than remembered.
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

/** An SVG of ours as a PNG at twice its size, set in the bundled font alone (no system fonts: the same picture everywhere). */
async function rasterise(svg: string): Promise<Uint8Array> {
  const fontBuffers = await load();
  const image = new Resvg(svg, {
    font: { fontBuffers, defaultFontFamily: 'Inter', loadSystemFonts: false },
    fitTo: { mode: 'zoom', value: CHART_SCALE },
  }).render();
  try {
    return image.asPng();
  } finally {
    image.free();
  }
}

/** The account's daily cost as a PNG, the anomaly's day marked. */
export const renderTrend = (picture: TrendPicture): Promise<Uint8Array> => rasterise(trendSvg(picture));

/** A PNG that says in words why there is no chart. */
export const renderNotice = (title: string, notice: string): Promise<Uint8Array> => rasterise(noticeSvg(title, notice));

/** Loads what the first picture needs ahead of it (a container's first request can start this beside its other reads). */
export const warmUp = (): Promise<unknown> => load();
