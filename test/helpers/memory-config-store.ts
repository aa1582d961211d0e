import type { LoadedConfig } from '../../lib/config/load.js';
import type { RelayConfig } from '../../lib/config/schema.js';
import type { RelayConfigStore } from '../../lib/config/store.js';

/** A RelayConfigStore held in memory: the test sets what is current and previous, and counts reads. */
export interface MemoryConfigStore extends RelayConfigStore {
  set(current: LoadedConfig | Error, previous?: RelayConfig): void;
  reads: { current: number; refresh: number; previous: number };
}

export function memoryConfigStore(current: LoadedConfig | Error, previous?: RelayConfig): MemoryConfigStore {
  let state = { current, previous };
  const reads = { current: 0, refresh: 0, previous: 0 };
  const value = async () => {
    if (state.current instanceof Error) throw state.current;
    return state.current;
  };
  return {
    reads,
    set(next, nextPrevious) {
      state = { current: next, previous: nextPrevious };
    },
    current() {
      reads.current++;
      return value();
    },
    async refreshIfOlderThan() {
      reads.refresh++;
      return value().catch(() => undefined);
    },
    async previous() {
      reads.previous++;
      return state.previous;
    },
  };
}
