/**
 * `{file: PATH, default}` values (docs/authoring.md "Values"): the file's content, read when the
 * integration runs — a secret mounted by Docker or Kubernetes, a certificate, a key. The trailing
 * newline editors and `echo` add is dropped. The read is bounded: a file value is a value, not a
 * data set.
 */
import { open } from 'node:fs/promises';
import { describeLocation } from '../definition/schema-validator.js';
import type { ValueTemplate } from '../definition/types.js';

/** Largest file a `{file}` value reads. */
export const MAX_FILE_VALUE_BYTES = 1024 * 1024;

type FileTemplate = Extract<ValueTemplate, { kind: 'file' }>;

/** A `{file}` value that cannot be read (the engine's EvaluationError, made by the caller). */
export class FileValueError extends Error {
  constructor(
    message: string,
    /** The file does not exist (an optional connection input is then simply absent). */
    readonly missing: boolean,
  ) {
    super(message);
  }
}

export async function readFileValue(t: FileTemplate): Promise<unknown> {
  const where = `needed by ${describeLocation(t.pointer)}`;
  let bytes: Buffer;
  try {
    const handle = await open(t.path, 'r');
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOTFILE' });
      if (st.size > MAX_FILE_VALUE_BYTES)
        throw new FileValueError(
          `file ${t.written} is ${st.size} bytes (${where}); a file value may be at most ${MAX_FILE_VALUE_BYTES} bytes`,
          false,
        );
      // Read at most one byte past the limit: a file that grew since stat() is refused, not read whole.
      const buf = Buffer.alloc(Math.min(st.size, MAX_FILE_VALUE_BYTES) + 1);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      if (bytesRead > MAX_FILE_VALUE_BYTES)
        throw new FileValueError(
          `file ${t.written} is larger than ${MAX_FILE_VALUE_BYTES} bytes (${where}); a file value may be at most that`,
          false,
        );
      bytes = buf.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof FileValueError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && t.hasDefault) return t.default;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'ENOTFILE' || code === 'EISDIR'
            ? 'not a file'
            : (err as Error).message;
    const hint = code === 'ENOENT' ? '; create it where the runner runs or give a default' : '';
    const shown = t.written === t.path ? t.path : `${t.written} (${t.path})`;
    throw new FileValueError(`file ${shown} cannot be read: ${why} (${where})${hint}`, code === 'ENOENT');
  }
  return bytes.toString('utf8').replace(/[\r\n]+$/, '');
}
