"""The official MCP conformance suite's server scenarios against `askq.py serve --http`.

    python .ci/conformance.py NODE CONFORMANCE_BIN

Starts `askq.py serve --http` on a free port, runs every active server
scenario, and compares the outcome with .ci/conformance-expected-failures.yml:
a failure that is not on the list fails (exit 1); a listed scenario that now
passes is reported, so that the list can lose it; anything that keeps the
suite from running fails too.  Prints one line per scenario and a count.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, "conformance-expected-failures.yml")


def expected_failures() -> "dict[str, str]":
    """The listed scenarios, each with the reason written beside it."""
    listed = {}
    with open(EXPECTED, encoding="utf-8") as stream:
        for line in stream:
            found = re.match(r"\s+-\s+([\w-]+)\s*(?:#\s*(.*))?$", line)
            if found:
                listed[found.group(1)] = found.group(2) or ""
    return listed


def start_server() -> "tuple[subprocess.Popen[bytes], str, str]":
    descriptor, log = tempfile.mkstemp(prefix="askq-conformance-", suffix=".log")
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "askq.py"), "serve", "--http", "--port", "0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=descriptor)
    os.close(descriptor)
    deadline = time.monotonic() + 10
    said = ""
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8", errors="replace") as stream:
            said = stream.read()
        found = re.search(r"http://\S+/mcp", said)
        if found:
            return server, found.group(0), log
        time.sleep(0.1)
    server.kill()
    raise SystemExit(f"serve --http did not say where it listens:\n{said}")


def run_suite(node: str, conformance: str, url: str) -> "dict[str, bool]":
    """Each scenario the suite ran, and whether it passed."""
    with tempfile.TemporaryDirectory() as results:
        done = subprocess.run([node, conformance, "server", "--url", url, "-o", results],
                              check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    output = done.stdout.decode("utf-8", "replace")
    summary = output.rpartition("=== SUMMARY ===")[2]
    outcomes = {name: mark == "\u2713" for mark, name in re.findall(r"^([\u2713\u2717]) ([\w-]+):", summary, re.MULTILINE)}
    if not outcomes:
        raise SystemExit(f"the conformance suite ran no scenario (exit {done.returncode}):\n{output[-3000:]}")
    return outcomes


def main() -> int:
    node, conformance = sys.argv[1:3]
    listed = expected_failures()
    server, url, log = start_server()
    try:
        outcomes = run_suite(node, conformance, url)
    finally:
        server.terminate()
        server.wait(timeout=10)
    bad = 0
    for name, passed in outcomes.items():
        if passed and name in listed:
            print(f"conformance: {name}: passes now, though listed as an expected failure"
                  f" ({listed[name]}): take it off {os.path.basename(EXPECTED)}")
        elif passed:
            print(f"conformance: {name}: passed")
        elif name in listed:
            print(f"conformance: {name}: failed, as expected: {listed[name]}")
        else:
            print(f"conformance: {name}: FAILED, and it is not an expected failure")
            bad += 1
    with open(log, encoding="utf-8", errors="replace") as stream:
        if "Traceback" in stream.read():
            print("conformance: serve --http wrote a traceback")
            bad += 1
    os.unlink(log)
    for name in sorted(set(listed) - set(outcomes)):
        print(f"conformance: {name}: listed as an expected failure, but the suite no longer runs it")
    passed = sum(outcomes.values())
    print(f"conformance: {passed} passed, {bad} failed")
    print(f"conformance: and {len(outcomes) - passed - bad} expected failures, each with its reason above")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
