#!/usr/bin/env node
// The npl-lb command: the built JavaScript where the package is built (installed from a registry
// or a tarball), else the TypeScript sources through tsx (a clone after `npm install`), so that
// `npx npl-lb <command>` works in both.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

const built = fileURLToPath(new URL('../dist/src/main/cli.js', import.meta.url));
if (existsSync(built)) await import(pathToFileURL(built).href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main/cli.ts', import.meta.url).href);
}
