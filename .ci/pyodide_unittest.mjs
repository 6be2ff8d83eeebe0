// Run the unittest suite inside Pyodide (CPython compiled to WebAssembly) under Node.js.
// usage: node .ci/pyodide_unittest.mjs PYODIDE_DIR REPO_DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, repoDir] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + "/" });

// Pyodide has its own in-memory file system: copy in what the suite needs.
pyodide.FS.mkdirTree("/project");
for (const name of ["askq.py", "test_askq.py", "schema.json", "example_args.json"]) {
  pyodide.FS.writeFile(`/project/${name}`, readFileSync(join(repoDir, name)));
}

const ok = pyodide.runPython(`
import os, sys, unittest
os.chdir("/project")
sys.path.insert(0, "/project")
print("pyodide: Python", sys.version.split()[0], "on", sys.platform)
suite = unittest.defaultTestLoader.loadTestsFromName("test_askq")
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(suite)
bad = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
print(f"pyodide: {result.testsRun - bad - skipped} passed, {bad} failed, {skipped} skipped")
result.wasSuccessful()
`);
process.exit(ok ? 0 : 1);
