import type { ChatService, ChatServices } from '../chat/service.js';
import { googleChatService } from '../notify/googlechat/service.js';
import { slackAppService } from '../notify/slack/app-service.js';
import { slackService } from '../notify/slack/service.js';
import { teamsService } from '../notify/teams/service.js';
import type { NodeFetch } from '../transport/fetch-over-node-http.js';

/**
 * The chat services a destination can be: adding one is one entry here and its own folder.
 * They post over node:http(s) unless given another transport (the benchmark's in-process one).
 */
export function createChatServices(transport?: NodeFetch, slackApiUrl?: string): ChatServices {
  return {
    slackApp: slackAppService({
      ...(transport ? { transport } : {}),
      ...(slackApiUrl !== undefined ? { apiUrl: slackApiUrl } : {}),
    }) as ChatService,
    slack: slackService(transport) as ChatService,
    teams: teamsService(transport) as ChatService,
    googlechat: googleChatService(transport) as ChatService,
  };
}
