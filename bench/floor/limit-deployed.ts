// The limit floor for the deployed configuration: the relay's round trips there, and nothing
// else. Configuration read (once per container), a conditional PutItem that claims the alert in
// the dedup table, the chat post, and a PutItem that records it delivered.
import { createHash } from 'node:crypto';
import { answer, awsJson, postToChat, readConfig } from './aws-call.js';

const putItem = (input: unknown) => awsJson('dynamodb', 'DynamoDB_20120810.PutItem', '1.0', input);

export const handler = async (event: { body?: string }) => {
  const body = event.body ?? '';
  const TableName = process.env['DEDUP_TABLE_NAME'];
  // Apart from the relay's ids (hashes of the alert's fields), so that the two never meet.
  const id = { S: `floor-${createHash('sha256').update(body).digest('hex')}` };
  const { destinations } = await readConfig();
  await putItem({ TableName, Item: { id, state: { S: 'claimed' } }, ConditionExpression: 'attribute_not_exists(id)' });
  await postToChat(destinations.default.url, body);
  await putItem({ TableName, Item: { id, state: { S: 'delivered' } } });
  return answer(200);
};
