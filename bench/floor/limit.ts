// The limit floor: only the two round trips no relay can avoid, the configuration read (once
// per container) and the chat post, over node:http with a hand-written signer. What the relay
// costs above this is the price of everything else: SDK code, validation, formatting, logging.
import { answer, postToChat, readConfig } from './aws-call.js';

export const handler = async (event: { body?: string }) => {
  const { destinations } = await readConfig();
  await postToChat(destinations.default.url, event.body ?? '');
  return answer(200);
};
