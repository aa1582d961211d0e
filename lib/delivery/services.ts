import { googleChatService } from '../googlechat/service.js';
import { slackService } from '../slack/service.js';
import { teamsService } from '../teams/service.js';
import type { ChatService, ChatServices } from './chat-service.js';

/** The chat services a destination can be: adding one is one entry here and its own folder. */
export function createChatServices(): ChatServices {
  return { slack: slackService() as ChatService, teams: teamsService() as ChatService, googlechat: googleChatService() as ChatService };
}
