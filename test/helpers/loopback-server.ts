import type { Server, ServerResponse } from 'node:http';

/** Stops a loopback test server at once: answers held open on purpose are cut, idle sockets closed. */
export async function closeServer(server: Server, hanging: Iterable<ServerResponse> = []): Promise<void> {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
