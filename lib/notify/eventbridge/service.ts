import { type AwsJsonService, awsJsonClient } from '../../aws/json-client.js';
import type { AwsPorts } from '../../aws/ports.js';
import type { ChatService } from '../../chat/service.js';
import type { KindEnvironment } from '../kind.js';
import type { EventBridgePost } from './lazy-eventbridge-post.js';

type Poster = ChatService<EventBridgePost>['post'];

/**
 * Amazon EventBridge: one event per post on the destination's bus, through the relay's own
 * signed AWS client. The formatter only keeps what it was given; the poster, which builds the
 * event, signs, sends and reads the answer, loads on the first post, so a configuration without
 * a bus never parses it. The client is handed over rather than imported there: it is on the
 * cold path already, and the lazy bundle would otherwise carry a second copy. Where the function
 * is given an AWS port (`aws.json`), PutEvents goes through the port's client instead, as every
 * other AWS call of the function does.
 */
export function eventBridgeService(settings?: KindEnvironment, aws?: AwsPorts): ChatService<EventBridgePost> {
  const port = aws?.json;
  const client: typeof awsJsonClient = port ? (service: AwsJsonService) => port(service) : awsJsonClient;
  let poster: Promise<Poster> | undefined;
  return {
    format: (...alert) => ({ alert }),
    post: async (...post) => {
      poster ??= import('./lazy-eventbridge-post.js').then((lazy) => lazy.createPoster(client, settings));
      return (await poster)(...post);
    },
    // PutEvents' quota counts per account and region, far above any alert stream: no pause between posts.
    minIntervalMs: 0,
    paceKey: (eventBus) => eventBus,
  };
}
