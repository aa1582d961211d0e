import * as z from 'zod/mini';
import '../validation/messages.js';
import type { AwsJsonCall } from '../aws/json-client.js';
import type { CostCenterRef } from '../message/cost-center.js';
import { OWNER_RECORD_SECONDS } from '../owners/directory.js';
import { ReasonedError } from '../shared/errors.js';
import { parseJson } from '../shared/json.js';

/**
 * What one payer's lists covered when directory-sync last read them whole: the cloud accounts,
 * and the cost centers that cover any of them. The owner records are kept per account, so
 * without this a run could not tell which accounts a payer stopped covering (their records
 * would name the old team until they expired), nor which ids other payers use too.
 */
export interface PayerIndex {
  accounts: string[];
  costCenters: CostCenterRef[];
  /** Epoch seconds when the lists answered. */
  readAt: number;
}

export interface PayerIndexStore {
  /** Undefined when there is none (never read whole since this was kept) or it has expired; rejects when it cannot be read whole. */
  read(accountKey: string, signal?: AbortSignal): Promise<PayerIndex | undefined>;
  write(accountKey: string, index: PayerIndex, signal?: AbortSignal): Promise<void>;
}

/** The index is missing a piece, or holds what no run of ours wrote. */
export class PayerIndexUnreadableError extends ReasonedError<'payer_index_unreadable'> {}

const payerIndexSchema = z.strictObject({
  accounts: z.array(z.string()),
  costCenters: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});

/** Item ids in the dedup table; the key is encoded, so that no key's id is another's piece. */
export const PAYER_INDEX_PREFIX = 'directory#payer#';
const itemId = (accountKey: string, piece: number) =>
  `${PAYER_INDEX_PREFIX}${encodeURIComponent(accountKey)}${piece === 0 ? '' : `#${piece}`}`;

/**
 * Characters per item: a character is at most three bytes of UTF-8 (a pair of them four), so
 * a piece stays well within DynamoDB's 400 KB an item, however large the payer.
 */
const PIECE_CHARS = 100_000;

type Item = Record<string, { S?: string; N?: string }>;

/** The text in pieces of at most `size` characters, never between the two halves of a surrogate pair. */
function piecesOf(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length || pieces.length === 0; ) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/**
 * The index in the dedup table, as JSON in one item per payer, or several for a payer too large
 * for one: the first names how many and is written last, and every piece carries the run's time,
 * so a reader never takes pieces of two runs for one. Account ids and cost-center ids and names
 * only; it expires with the owner records it describes.
 */
export function dynamoPayerIndex(
  dynamo: AwsJsonCall,
  tableName: string,
  now: () => number = Date.now,
  pieceChars = PIECE_CHARS,
): PayerIndexStore {
  const get = async (id: string, signal: AbortSignal | undefined): Promise<Item | undefined> =>
    (await dynamo('GetItem', { TableName: tableName, Key: { id: { S: id } } }, signal))['Item'] as Item | undefined;
  return {
    async read(accountKey, signal) {
      const first = await get(itemId(accountKey, 0), signal);
      const expiresAt = Number(first?.['expiresAt']?.N);
      if (!first || !(expiresAt >= Math.floor(now() / 1000))) return undefined;
      const readAt = first['readAt']?.N;
      const pieces = Number(first['pieces']?.N ?? 1);
      const texts = [first['data']?.S];
      for (let piece = 1; piece < pieces; piece++) {
        const item = await get(itemId(accountKey, piece), signal);
        if (item?.['readAt']?.N !== readAt) {
          throw new PayerIndexUnreadableError(`piece ${piece} of ${pieces} is missing or from another run`, 'payer_index_unreadable');
        }
        texts.push(item?.['data']?.S);
      }
      const json = parseJson(texts.join(''));
      const parsed = json.ok ? payerIndexSchema.safeParse(json.value) : undefined;
      if (!parsed?.success || readAt === undefined) {
        throw new PayerIndexUnreadableError('it does not hold what directory-sync writes', 'payer_index_unreadable');
      }
      return { ...parsed.data, readAt: Number(readAt) };
    },
    async write(accountKey, { accounts, costCenters, readAt }, signal) {
      const text = JSON.stringify({ accounts, costCenters: costCenters.map(({ id, name }) => ({ id, name })) });
      const data = piecesOf(text, pieceChars);
      const expiresAt = { N: String(readAt + OWNER_RECORD_SECONDS) };
      const item = (piece: number) => ({
        id: { S: itemId(accountKey, piece) },
        readAt: { N: String(readAt) },
        data: { S: data[piece] as string },
        expiresAt,
      });
      for (let piece = data.length - 1; piece >= 1; piece--) await dynamo('PutItem', { TableName: tableName, Item: item(piece) }, signal);
      await dynamo('PutItem', { TableName: tableName, Item: { ...item(0), pieces: { N: String(data.length) } } }, signal);
    },
  };
}
