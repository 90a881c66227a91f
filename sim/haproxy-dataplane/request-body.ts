/**
 * A request body as the simulated Data Plane API reads it: JSON (the default), text/plain (a
 * stored file's new contents), or a multipart upload (`file_upload`, the storage endpoints').
 */
import { DpError } from './config-crud.ts';
import type { Upload } from './storage.ts';

export interface ParsedBody {
  /** JSON, or the text of a text/plain body (what the spec's body parameter holds). */
  body: unknown;
  /** A multipart upload's parts: field name -> file name. */
  form: Record<string, string> | undefined;
  upload: Upload;
}

export async function parseBody(type: string, raw: Buffer): Promise<ParsedBody> {
  const text = raw.toString('utf8');
  if (type.startsWith('multipart/form-data')) {
    const parts = await new Response(raw, { headers: { 'content-type': type } }).formData().catch(() => {
      throw new DpError(400, 'the multipart body does not parse');
    });
    const form: Record<string, string> = {};
    const upload: Upload = {};
    for (const [field, value] of parts) {
      if (typeof value === 'string') continue;
      form[field] = value.name;
      if (field === 'file_upload') upload.file = { filename: value.name, content: await value.text() };
    }
    return { body: undefined, form, upload };
  }
  if (type.startsWith('text/plain')) return { body: text, form: undefined, upload: { text } };
  if (!text) return { body: undefined, form: undefined, upload: {} };
  try {
    return { body: JSON.parse(text) as unknown, form: undefined, upload: {} };
  } catch {
    throw new DpError(400, 'the body is not JSON');
  }
}
