// What the console destinations received, for the preview page: in memory only, and bounded,
// so a long `npm start` session (or a flood of test alerts) cannot grow the process.
import type { ConsoleType } from '../console-chat.js';

export interface Delivery {
  /** Increases by one per delivery; the page compares it to know when to reload. */
  id: number;
  type: ConsoleType;
  receivedAt: string;
  /** The body exactly as the relay posted it (no URL: the console never learns the destination's name). */
  body: unknown;
}

export const DEFAULT_DELIVERY_LIMIT = 50;

export class DeliveryLog {
  #entries: Delivery[] = [];
  #nextId = 1;

  constructor(
    readonly limit = DEFAULT_DELIVERY_LIMIT,
    private readonly now: () => Date = () => new Date(),
  ) {}

  record(type: ConsoleType, body: unknown): Delivery {
    const delivery = { id: this.#nextId++, type, receivedAt: this.now().toISOString(), body };
    this.#entries.push(delivery);
    if (this.#entries.length > this.limit) this.#entries.splice(0, this.#entries.length - this.limit);
    return delivery;
  }

  /** Newest first. */
  list(): Delivery[] {
    return [...this.#entries].reverse();
  }

  latestId(): number {
    return this.#nextId - 1;
  }
}
