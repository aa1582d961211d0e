import assets from './assets.json' with { type: 'json' };

/**
 * The files the rasteriser reads: resvg's WebAssembly and the font the pictures are set in (Inter,
 * under the SIL Open Font License, whose text ships beside it). The build (scripts/build.mjs)
 * copies each from its package into the folder of every function whose bundle draws pictures;
 * run from source, they are read where the package has them.
 */
export const CHART_ASSETS: ReadonlyArray<{ file: string; from: string }> = assets;

export type ChartAsset = 'resvg.wasm' | 'Inter-Regular.ttf' | 'Inter-SemiBold.ttf' | 'Inter-LICENSE.txt';
