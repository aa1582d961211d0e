// The limit floor for a Slack app destination with the dedup table: the round trips such a
// delivery cannot avoid, and nothing else. Configuration read (once per container), a table
// read, the Web API post with the bot token, and a table write that records it.
import { createHash } from 'node:crypto';
import { answer, awsJson, post, readConfig } from './aws-call.js';

interface AppConfig {
  slack: { botToken: string };
  destinations: { default: { channel: string } };
}

export const handler = async (event: { body?: string }) => {
  const body = event.body ?? '';
  const TableName = process.env['DEDUP_TABLE_NAME'];
  // Apart from the relay's ids, so that the two never meet.
  const id = { S: `floor-app-${createHash('sha256').update(body).digest('hex')}` };
  const config = (await readConfig()) as unknown as AppConfig;
  await awsJson('dynamodb', 'DynamoDB_20120810.GetItem', '1.0', { TableName, Key: { id } });
  const url = new URL('chat.postMessage', process.env['SLACK_API_URL']);
  const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${config.slack.botToken}` };
  await post(url, headers, JSON.stringify({ channel: config.destinations.default.channel, text: body }));
  await awsJson('dynamodb', 'DynamoDB_20120810.PutItem', '1.0', { TableName, Item: { id, state: { S: 'delivered' } } });
  return answer(200);
};
