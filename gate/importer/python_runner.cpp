#include <gate/importer/detail.hpp>

namespace gate::importer::detail {

// clang-format off
const std::string_view k_python_runner =
R"PY(#!/usr/bin/env python3
# Written by `gate import promptfoo` (docs/import.md "Assertions"): runs one
# of promptfoo's inline python assertions as promptfoo runs it. The code is
# the body of main(output, context) (one line: what it returns), called with
# the answer (stdin); what it returns is read as promptfoo reads it. Exit 0
# passes; the first line printed is the reason.
#   python3 promptfoo_python.py [--inverse] [--threshold T] -- CODE
import json
import math
import re
import sys


def build(code):
    if "\n" in code:
        found = re.search(r"^(?!\s*$)\s+", code, re.M)
        indent = found.group(0) if found else "    "
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = "    return " + code
    return "import json\n\ndef main(output, context):\n" + body + "\n"


def parse_float(text):
    found = re.match(r"\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))", text)
    if not found:
        raise ValueError("python assertion must return a boolean, number, or {pass, score, reason} object")
    return float(found.group(1).replace("Infinity", "inf"))


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def judged(result, threshold, inverse):
    """(passed, reason): promptfoo's reading of a python assertion's result."""
    lower = result.lower() if isinstance(result, str) else None
    if result is True or lower == "true":
        return (not inverse, "Python code returned true")
    if result is False or lower == "false":
        return (inverse, "Python code returned false")
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError("not JSON: " + repr(result))
    if isinstance(result, str) and result.startswith("{"):
        result = json.loads(result)
        if not isinstance(result, dict):
            raise ValueError("python assertion must return a boolean, number, or {pass, score, reason} object")
    if isinstance(result, (dict, list, tuple)):
        ok = (isinstance(result, dict) and isinstance(result.get("pass"), bool)
              and is_number(result.get("score")) and isinstance(result.get("reason"), str))
        if not ok:
            raise ValueError("python assertion must return a boolean, number, or {pass, score, reason} object")
        passed = result["pass"]
        if threshold is not None and result["score"] < threshold:
            passed = False
        return (passed != inverse, result["reason"])
    score = float(result) if is_number(result) else parse_float(str(result))
    raw = score > 0 if threshold is None else score >= threshold
    return (raw != inverse, "Python code returned " + ("true" if raw else "false"))


def main():
    args = sys.argv[1:]
    inverse, threshold = False, None
    while args and args[0] != "--":
        if args[0] == "--inverse":
            inverse, args = True, args[1:]
        elif args[0] == "--threshold" and len(args) > 1:
            threshold, args = float(args[1]), args[2:]
        else:
            print("usage: promptfoo_python.py [--inverse] [--threshold T] -- CODE")
            return 2
    if len(args) != 2:
        print("usage: promptfoo_python.py [--inverse] [--threshold T] -- CODE")
        return 2
    output = sys.stdin.buffer.read().decode("utf-8", "replace")
    try:
        scope = {}
        exec(build(args[1]), scope)
        passed, reason = judged(scope["main"](output, {}), threshold, inverse)
    except Exception as e:  # promptfoo fails the assertion, inverse or not
        print(("Python code execution failed: " + str(e)).splitlines()[0])
        return 1
    print(reason.splitlines()[0] if reason else "")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
)PY";
// clang-format on

} // namespace gate::importer::detail
