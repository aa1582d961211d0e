import type { LazySqs } from '../aws/clients.js';
import type { RelayConfigStore } from '../config/store.js';
import type { DeliveryLedger } from '../dedup/ledger.js';
import type { Delivery } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';

/** What the relay hands its lazily loaded escalations: its own instances, so that their bundle carries no second copy. */
export interface EscalationWiring {
  ledger?: DeliveryLedger | undefined;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  sqs: LazySqs;
  /** The relay's settings that escalations read. */
  settings: { DELIVERY_QUEUE_URL?: string | undefined; DEDUP_TABLE_NAME?: string | undefined; DEDUP_WINDOW_SECONDS?: number | undefined };
  /** `npm start`'s: an in-process timer instead of the queue, which then processes the escalation in this process. */
  options: { localEscalations?: boolean | undefined };
  /** What `npm start`'s timer posts with: the relay's configuration and delivery core. */
  config: RelayConfigStore;
  delivery: Delivery;
  typeOf: (destination: object) => string;
}
