// A reporter for Node's test runner that says nothing until the run ends, then lists each test that
// failed: where it is, its name under its suites, and the first lines of its error. run-tests.mjs
// adds it after the TAP reporter, so the failures are the last lines of a run: a CI log that keeps
// only its tail still names them (a run of 1,300 tests printed "# fail 1" and nothing else of it).
//
// Only the tests that failed of themselves are listed: a suite that failed because a test under it
// did (failureType subtestsFailed) is not listed again.

const ERROR_LINES = 12;

/** The error's message and stack (Node's own frames left out), indented under the test. */
function describeError(error) {
  const inner = error?.cause ?? error;
  const text = inner instanceof Error ? (inner.stack ?? `${inner.name}: ${inner.message}`) : String(inner);
  return text
    .split('\n')
    .filter((line) => !/^\s+at (.*\()?node:/.test(line))
    .slice(0, ERROR_LINES)
    .map((line) => `#     ${line}`)
    .join('\n');
}

export default async function* failuresReporter(source) {
  const failed = [];
  // The names of the suites above the test now reported, by file and nesting level (the events of
  // files run side by side may interleave).
  const paths = new Map();
  for await (const event of source) {
    const path = paths.get(event.data?.file) ?? [];
    paths.set(event.data?.file, path);
    if (event.type === 'test:start') {
      path[event.data.nesting] = event.data.name;
      path.length = event.data.nesting + 1;
    }
    if (event.type !== 'test:fail') continue;
    const { data } = event;
    const error = data.details?.error;
    if (error?.failureType === 'subtestsFailed') continue;
    const names = [...path.slice(0, data.nesting), data.name].filter((n) => n !== undefined);
    const where = data.file ? `${data.file}${data.line ? `:${data.line}` : ''}` : '(no file)';
    failed.push(`# ${where}\n#   ${names.join(' > ')}\n${describeError(error)}`);
  }
  if (failed.length === 0) return;
  yield `\n# failed tests: ${failed.length}\n${failed.join('\n')}\n`;
}
