/**
 * The files the rasteriser reads: resvg's WebAssembly and the font the pictures are set in (Inter,
 * under the SIL Open Font License, whose text ships beside it). The build copies each from its
 * package into the triage function's folder under `file`; run from source, they are read where
 * the package has them.
 */
export const CHART_ASSETS = [
  { file: 'resvg.wasm', from: '@resvg/resvg-wasm/index_bg.wasm' },
  { file: 'Inter-Regular.ttf', from: '@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf' },
  { file: 'Inter-SemiBold.ttf', from: '@expo-google-fonts/inter/600SemiBold/Inter_600SemiBold.ttf' },
  { file: 'Inter-LICENSE.txt', from: '@expo-google-fonts/inter/LICENSE_FONT' },
] as const;

export type ChartAsset = (typeof CHART_ASSETS)[number]['file'];
