// Prints a free TCP port on 127.0.0.1 (for tests that start servers).
import { createServer } from 'node:net';
const server = createServer();
server.listen(0, '127.0.0.1', () => {
  console.log(server.address().port);
  server.close();
});
