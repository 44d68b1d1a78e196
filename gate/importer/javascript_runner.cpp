#include <gate/importer/detail.hpp>

namespace gate::importer::detail {

// clang-format off
const std::string_view k_javascript_runner =
R"JS(// Written by `gate import promptfoo` (docs/import.md "Assertions"): runs one
// of promptfoo's javascript assertions as promptfoo 0.121 runs it, under node.
// The answer is stdin (promptfoo's `output`); context.vars are the test's
// vars as promptfoo holds them (--vars); context.prompt is the prompt sent,
// when it was one text (--prompt-from-case: the one user message in
// GATE_CASE). Exit 0 passes, 1 fails; the first line printed is the reason.
// A context field gate cannot give (provider, test, ...) or a grader file
// that does not load ends the runner by a signal: gate then reports the
// check errored, never passed or failed.
//   node promptfoo_javascript.mjs [--inverse] [--threshold T] [--vars JSON]
//        [--config JSON] [--prompt-from-case] (--file PATH [--function NAME] | -- CODE)
import { writeSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

function say(line) {
  writeSync(1, String(line).split("\n")[0] + "\n");
}

// Not a verdict on the answer: gate reports the check errored.
function cannot(line) {
  say(line);
  process.kill(process.pid, "SIGKILL");
}

// promptfoo's one-line form: `return` before the expression, or before the
// last statement's expression when the line declares (`const s = ...; s > 1`).
function lastStatementSemicolon(code) {
  let quote = "";
  let last = -1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    let slashes = 0;
    for (let j = i - 1; j >= 0 && code[j] === "\\"; j--) slashes++;
    if (slashes % 2 === 0 && (c === "'" || c === '"' || c === "`")) {
      if (quote === "") quote = c;
      else if (quote === c) quote = "";
    }
    if (c === ";" && quote === "") last = i;
  }
  return last;
}

function functionBody(code) {
  const line = code.trim().replace(/;+\s*$/, "");
  if (!/^(const|let|var)\s/.test(line)) return "return " + line;
  const at = lastStatementSemicolon(line);
  if (at === -1) return line;
  const tail = line.slice(at + 1).trim();
  return tail ? line.slice(0, at + 1) + " return " + tail : line;
}

function isGradingResult(r) {
  const optional = (v, type) => v === undefined || typeof v === type;
  return typeof r === "object" && r !== null && typeof r.pass === "boolean" && typeof r.score === "number" &&
    typeof r.reason === "string" && optional(r.namedScores, "object") && optional(r.namedScoreWeights, "object") &&
    optional(r.tokensUsed, "object") && (r.componentResults === undefined || Array.isArray(r.componentResults)) &&
    (r.assertion === undefined || r.assertion === null || typeof r.assertion === "object") &&
    optional(r.comment, "string");
}

async function validated(result) {
  result = await result;
  if (typeof result === "boolean" || typeof result === "number" || isGradingResult(result)) return result;
  throw new Error(`Custom function must return a boolean, number, or GradingResult object. Got type ${typeof result}: ${JSON.stringify(result)}`);
}

// [passed, reason] as promptfoo reads a boolean, a number or a GradingResult.
function judged(result, threshold, inverse) {
  if (typeof result === "boolean") {
    const pass = result !== inverse;
    return [pass, pass ? "Assertion passed" : `Custom function returned ${result}`];
  }
  if (typeof result === "number") {
    const raw = threshold === undefined ? result > 0 : result >= threshold;
    const pass = raw !== inverse;
    return [pass, pass ? "Assertion passed" : `Custom function returned ${raw}`];
  }
  const pass = result.pass !== inverse;
  return [pass, pass === result.pass ? result.reason : pass ? "Assertion passed" : `Custom function returned ${result.pass}`];
}

// promptfoo's context, with the fields gate can give; reading another one
// would grade on something gate does not have.
function makeContext(vars, config, promptFromCase) {
  const known = { vars };
  if (config !== undefined) known.config = config;
  if (promptFromCase) {
    const c = JSON.parse(process.env.GATE_CASE || "{}");
    const input = c.input || [];
    if (!c.system && input.length === 1 && input[0].role === "user") known.prompt = input[0].content;
  }
  const missing = new Set(["prompt", "test", "provider", "providerResponse", "metadata", "trace"]);
  return new Proxy(known, {
    get(target, name, receiver) {
      if (typeof name === "string" && missing.has(name) && !(name in target))
        cannot(`context.${name}: promptfoo passes it to the assertion; gate's runner has only context.vars` +
               (promptFromCase ? ", context.prompt" : "") + (config !== undefined ? ", context.config" : "") +
               " (docs/import.md)");
      return Reflect.get(target, name, receiver);
    },
  });
}

async function main() {
  const args = process.argv.slice(2);
  let inverse = false, threshold, vars = {}, config, promptFromCase = false, file, fn, code;
  const usage = "usage: promptfoo_javascript.mjs [--inverse] [--threshold T] [--vars JSON] [--config JSON] " +
    "[--prompt-from-case] (--file PATH [--function NAME] | -- CODE)";
  while (args.length > 0) {
    const a = args.shift();
    if (a === "--inverse") inverse = true;
    else if (a === "--prompt-from-case") promptFromCase = true;
    else if (a === "--threshold" && args.length > 0) threshold = Number(args.shift());
    else if (a === "--vars" && args.length > 0) vars = JSON.parse(args.shift());
    else if (a === "--config" && args.length > 0) config = JSON.parse(args.shift());
    else if (a === "--file" && args.length > 0) file = args.shift();
    else if (a === "--function" && args.length > 0) fn = args.shift();
    else if (a === "--" && args.length === 1) code = args.shift();
    else {
      say(usage);
      return 2;
    }
  }
  if ((file === undefined) === (code === undefined)) {
    say(usage);
    return 2;
  }
  const output = readFileSync(0, "utf8");
  const context = makeContext(vars, config, promptFromCase);
  let fromFile;
  if (file !== undefined) {
    // promptfoo loads and calls a grader file outside the assertion's own
    // error handling: a file that does not load, or a function that throws,
    // is an error of the eval, not a failed assertion.
    try {
      const loaded = await import(pathToFileURL(resolve(file)).href);
      const mod = loaded?.default?.default || loaded?.default || loaded;
      const f = fn ? mod[fn] : mod;
      if (typeof f === "function") fromFile = await f(output, context);
      else if (f && typeof f.default === "function") fromFile = await f.default(output, context);
      else throw new Error(`Assertion malformed: ${file} must export a function or have a default export as a function`);
    } catch (e) {
      cannot(`the grader file ${file} failed to run: ${e && e.message}`);
    }
  }
  let result;
  try {
    if (file === undefined) {
      const body = code.trimEnd();
      const run = new Function("output", "context", "process", body.includes("\n") ? body : functionBody(body));
      result = await validated(run(output, context, process));
    } else {
      if (!["boolean", "number", "object"].includes(typeof fromFile))
        throw new Error(`Javascript assertion script must return a boolean, number, or object (file://${file})`);
      result = await validated(fromFile);
    }
  } catch (e) {
    // A function that throws fails the assertion, negated or not.
    say(`Custom function threw error: ${e && e.message}`);
    return 1;
  }
  const [pass, reason] = judged(result, threshold, inverse);
  say(reason);
  return pass ? 0 : 1;
}

process.exitCode = await main();
)JS";
// clang-format on

} // namespace gate::importer::detail
