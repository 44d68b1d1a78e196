// A fake GitHub release download server for the action's fetch step
// (tests/e2e/test_action.cpp): serves the files under DIR on 127.0.0.1 at a
// port it picks, GET /<tag>/<asset> -> DIR/<tag>/<asset>, 404 for anything
// else. Node because the tests already need it (the workflow linters), and
// its http module is all this needs. The first line on stdout is
// "listening on http://127.0.0.1:<port>". It stops on SIGTERM (the test's
// cleanup) or after SECONDS (argv[3], default 120), so a test that dies
// leaves nothing running for long.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const root = path.resolve(process.argv[2] || '.');
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  const file = path.join(root, path.normalize(url));
  // Only plain files inside root; no traversal, no listings.
  if (req.method !== 'GET' || !file.startsWith(root + path.sep) || !fs.existsSync(file) ||
      !fs.statSync(file).isFile()) {
    res.writeHead(404, {'Content-Type': 'text/plain'});
    res.end('Not Found');
    return;
  }
  res.writeHead(200, {'Content-Type': 'application/octet-stream'});
  fs.createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
setTimeout(() => process.exit(0), 1000 * Number(process.argv[3] || 120)).unref();
