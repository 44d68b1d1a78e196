// Loads an npm package from $GATE_TOOLS_DIR (default ~/.cache/gate-tools),
// where .ci/deps --test installs the pinned SDKs, not from the repository.
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const tools = process.env.GATE_TOOLS_DIR || path.join(os.homedir(), ".cache", "gate-tools");
const require = createRequire(path.join(tools, "package.json"));

export function sdk(name) {
  const m = require(name);
  return m.default ?? m;
}

// Prints the run's results as one JSON line; the C++ driver compares the
// line of a recording run with that of a replay.
export function report(results) {
  process.stdout.write(JSON.stringify(results) + "\n");
}
