import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';

/** One event a bus took. */
export interface BusEvent {
  at: number;
  bus: string;
  source: string;
  detailType: string;
  detail: unknown;
}

/** Amazon EventBridge's PutEvents in memory: entries checked as AWS checks them, events kept per bus. */
export function memoryEventBridge(options: { now: () => number }): { call: AwsJsonCall; events: BusEvent[] } {
  const events: BusEvent[] = [];
  const call: AwsJsonCall = async (operation, input) => {
    if (operation !== 'PutEvents') throw new AwsServiceError('UnknownOperationException', 400, {});
    const entries = (input['Entries'] ?? []) as Array<Record<string, unknown>>;
    if (entries.length === 0 || entries.length > 10) throw new AwsServiceError('ValidationException', 400, {});
    const answered = entries.map((entry) => {
      const detail = String(entry['Detail'] ?? '');
      let parsed: unknown;
      try {
        parsed = JSON.parse(detail);
      } catch {
        return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
      }
      if (Buffer.byteLength(detail) > 256 * 1024) return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Entry too large.' };
      events.push({
        at: options.now(),
        bus: String(entry['EventBusName'] ?? 'default'),
        source: String(entry['Source']),
        detailType: String(entry['DetailType']),
        detail: parsed,
      });
      return { EventId: `ev-${events.length}` };
    });
    return { FailedEntryCount: answered.filter((a) => 'ErrorCode' in a).length, Entries: answered };
  };
  return { call, events };
}
