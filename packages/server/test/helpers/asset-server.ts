/** A static file server on 127.0.0.1 for reference assets in tests. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AssetServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `files` (path → body and content type); every other path is 404. */
export async function startAssetServer(
  files: Record<string, { body: Buffer; type: string }>,
): Promise<AssetServer> {
  const server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (!file) {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
