// The kinds' tools for `npm start`, its preview page and the tests. Found by the kind's folder
// (`lib/notify/<type>/tools.ts`, exporting `tools`) rather than listed: a kind is registered in
// one place (kinds.ts), and nothing a function imports reaches this module, so the consoles and
// previews are in no deployed bundle (bench/README.md, "What each function deploys").
import type { KindTools } from './kind.js';
import { DESTINATION_TYPES, type DestinationType } from './kinds.js';

/** The tools of one kind; a kind without them is refused loudly, so the contract suite cannot pass it by. */
export async function toolsOf(type: DestinationType): Promise<KindTools> {
  // Resolved when called, as tsx and vitest resolve any import (vite would otherwise try to list
  // the folders at build time, and find no .js files).
  const loaded = (await import(/* @vite-ignore */ `./${type}/tools.js`)) as { tools?: KindTools };
  if (!loaded.tools) throw new Error(`lib/notify/${type}/tools.ts exports no tools`);
  return loaded.tools;
}

/** Every kind's tools, by type. */
export async function allKindTools(): Promise<Readonly<Record<DestinationType, KindTools>>> {
  const loaded = await Promise.all(DESTINATION_TYPES.map(async (type) => [type, await toolsOf(type)] as const));
  return Object.fromEntries(loaded) as Record<DestinationType, KindTools>;
}
