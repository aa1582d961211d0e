// The relay's own work in process (bench/in-process.ts), then the SDK floor's post, in one
// container: what the relay's work costs when it runs between network waits, as it does in
// production, rather than back to back in a tight loop. If the relay costs about what this
// costs, what it adds over the SDK floor is its own work, slowed by running after a round trip.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { handler as sdkFloor } from './floor/sdk.js';
import { handler as ownWork } from './in-process.js';

export const handler = async (event: APIGatewayProxyEventV2, context: Context) => {
  const answer = await ownWork(event, context);
  return answer.statusCode === 200 ? sdkFloor(event) : answer;
};
