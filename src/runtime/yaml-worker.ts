/**
 * The worker thread that parses large YAML texts for parseYamlOffThread (yaml-input.ts), so a
 * body of megabytes never holds the main event loop: a message `{id, text, limits}` is answered
 * `{id, docs}` or `{id, problem, message}`.
 */
import { parentPort } from 'node:worker_threads';
import { parseYamlDocuments, YamlInputError, type YamlLimits } from './yaml-input.ts';

parentPort?.on('message', (m: { id: number; text: string; limits: YamlLimits }) => {
  try {
    parentPort!.postMessage({ id: m.id, docs: parseYamlDocuments(m.text, m.limits) });
  } catch (err) {
    const problem = err instanceof YamlInputError ? err.problem : 'syntax';
    parentPort!.postMessage({ id: m.id, problem, message: err instanceof Error ? err.message : String(err) });
  }
});
