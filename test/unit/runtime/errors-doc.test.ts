import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ErrorCodes } from '../../../src/runtime/errors.ts';

it('docs/errors.md lists exactly the error codes the code defines', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(NPL_[A-Z_]+)`\s*\|/gm)].map((m) => m[1]).sort();
  assert.deepEqual(documented, Object.values(ErrorCodes).sort());
});

it('docs/errors.md lists exactly the Event reasons the code writes', async () => {
  const { EventReasons } = await import('../../../src/kube/event-reasons.ts');
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Event reasons'));
  const documented = [...section.matchAll(/^\| `([A-Za-z]+)`\s*\|/gm)].map((m) => m[1]).sort();
  assert.deepEqual(documented, Object.values(EventReasons).sort());
});

it('every Event the code writes uses a reason of EventReasons, never a string of its own', () => {
  const files = [
    'src/controller/lb-events.ts',
    'src/controller/controller.ts',
    'src/agent/npl-controller.ts',
    'src/source/ingress/routes.ts',
  ];
  for (const f of files) {
    const text = readFileSync(new URL(`../../../${f}`, import.meta.url), 'utf8');
    const literals = [
      ...text.matchAll(/(?:record|send|say)\([^;]*?'(?:Normal|Warning)',\s*'([A-Za-z]+)'/gs),
    ].map((m) => m[1]);
    assert.deepEqual(literals, [], `${f} writes reasons as literals`);
  }
});

it('docs/errors.md lists exactly the adapter error codes, with whether each is terminal', async () => {
  const { ADAPTER_ERROR_CODES } = await import('../../../src/adapter/errors.ts');
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Load-balancer adapter codes'), doc.indexOf('## Event reasons'));
  const documented = [...section.matchAll(/^\| `([A-Za-z0-9]+)`\s*\|\s*(yes|no)\s*\|/gm)].map((m) => [
    m[1],
    m[2] === 'yes',
  ]);
  assert.deepEqual(documented.sort(), Object.entries(ADAPTER_ERROR_CODES).sort());
});

it('docs/troubleshooting.md reaches every Event reason and error code of docs/errors.md, each index link to a section of its own', () => {
  const errors = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const page = readFileSync(new URL('../../../docs/troubleshooting.md', import.meta.url), 'utf8');
  const names = [...errors.matchAll(/^\| `([A-Za-z0-9_]+)`\s*\|/gm)].map((m) => m[1]!);
  assert.ok(names.length > 60, 'the reasons and codes of errors.md');
  const index = page.slice(page.indexOf('## Index'));
  const rows = new Map(
    [...index.matchAll(/^\| `([A-Za-z0-9_]+)`\s*\| \[[^\]]+\]\(#([a-z0-9-]+)\)/gm)].map((m) => [
      m[1]!,
      m[2]!,
    ]),
  );
  // GitHub's anchors: the heading in lower case, spaces as '-', punctuation dropped.
  const anchorOf = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^a-z0-9 -]/g, '')
      .replace(/ /g, '-');
  const headings = [...page.matchAll(/^##+ (.+)$/gm)];
  const anchors = new Set(headings.map((m) => anchorOf(m[1]!)));
  for (const name of names) {
    const anchor = rows.get(name);
    assert.ok(anchor, `${name} is not in the troubleshooting index`);
    assert.ok(anchors.has(anchor), `${name}: #${anchor} is no section of the page`);
    // The section the index points at says what to do about it.
    const start = [...page.matchAll(/^##+ (.+)$/gm)].find(
      (m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-') === anchor,
    )!.index!;
    const end = page.indexOf('\n## ', start + 3);
    assert.ok(page.slice(start, end).includes(`\`${name}\``), `${name} is not in the section #${anchor}`);
  }
  assert.deepEqual(
    [...rows.keys()].filter((k) => !names.includes(k)),
    [],
    'no stale index rows',
  );
});
