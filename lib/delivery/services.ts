import { slackService } from '../slack/service.js';
import type { ChatService, ChatServices } from './chat-service.js';

/** The chat services a destination can be: adding one is one entry here and its own folder. */
export function createChatServices(): ChatServices {
  return { slack: slackService() as ChatService };
}
