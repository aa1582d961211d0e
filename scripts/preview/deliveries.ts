// What the console destinations received, for the preview page: in memory only, and bounded,
// so a long `npm start` session (or a flood of test alerts) cannot grow the process.
import type { RelayConfig } from '../../lib/config/schema.js';
import { addressOf } from '../../lib/notify/kinds.js';
import type { ConsoleType } from '../console-chat.js';

export interface Delivery {
  /** Increases by one per delivery; the page compares it to know when to reload. */
  id: number;
  type: ConsoleType;
  receivedAt: string;
  /** The body exactly as the relay posted it (no URL). */
  body: unknown;
  /** The configured destinations it was posted for (destinationsAt); none when the configuration does not say. */
  destinations: string[];
}

/** Where a console received a post: its path and query as requested, and the Slack channel a Web API call names. */
export interface PostedAt {
  pathAndQuery: string;
  channel?: string | undefined;
}

/**
 * The destinations of the configuration that post where a console received a post: those whose
 * URL has this path and query, or whose Slack channel the call names. Two destinations that share
 * one console URL are both named; giving each its own path (`/console/slack/finops`) tells them apart.
 */
export function destinationsAt(config: Pick<RelayConfig, 'destinations'>, at: PostedAt): string[] {
  return Object.entries(config.destinations).flatMap(([name, destination]) => {
    const channel = (destination as { channel?: string }).channel;
    if (channel !== undefined) return at.channel === channel ? [name] : [];
    try {
      const url = new URL(addressOf(destination));
      return url.pathname + url.search === at.pathAndQuery ? [name] : [];
    } catch {
      return [];
    }
  });
}

export const DEFAULT_DELIVERY_LIMIT = 50;

export class DeliveryLog {
  #entries: Delivery[] = [];
  #nextId = 1;

  constructor(
    readonly limit = DEFAULT_DELIVERY_LIMIT,
    private readonly now: () => Date = () => new Date(),
  ) {}

  record(type: ConsoleType, body: unknown, destinations: readonly string[] = []): Delivery {
    const delivery = { id: this.#nextId++, type, receivedAt: this.now().toISOString(), body, destinations: [...destinations] };
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
