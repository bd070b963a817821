/** Turns file-system and SQLite failures into errors that name the path and what to do. */
import { StorageUnavailableError } from '../../common/errors.js';

const ADVICE = 'Check that it is a directory the user running hcm-runner can write to (or pass another --data directory).';

export function openError(dir: string, cause: unknown): Error {
  const e = cause as NodeJS.ErrnoException & { code?: string };
  let reason: string;
  switch (e?.code) {
    case 'ENOTDIR':
    case 'EEXIST':
      reason = 'a part of the path is a file, not a directory';
      break;
    case 'EACCES':
    case 'EPERM':
      reason = 'permission denied';
      break;
    case 'EROFS':
    case 'SQLITE_READONLY':
      reason = 'the file system is read-only';
      break;
    case 'ENOSPC':
    case 'SQLITE_FULL':
      reason = 'the disk is full';
      break;
    case 'SQLITE_CANTOPEN':
      reason = 'the database file cannot be opened';
      break;
    case 'SQLITE_CORRUPT':
    case 'SQLITE_NOTADB':
      return withCause(
        new Error(`the database in data directory "${dir}" is not a valid hcm-runner database (${e.code}): restore it from a backup or move it away`),
        cause,
      );
    default:
      reason = e?.message ?? String(cause);
  }
  return withCause(new Error(`cannot use data directory "${dir}": ${reason}. ${ADVICE}`), cause);
}

/**
 * Errors of a write that was rolled back: a StorageUnavailableError when the storage itself is
 * at fault (full, read-only, I/O error, corrupt), else the error as it is.
 */
export function writeError(dir: string, cause: unknown): Error {
  const code = (cause as { code?: string })?.code ?? '';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return unavailable(`data directory "${dir}" is full (${code}): the write was rolled back; free disk space and retry`, cause);
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return unavailable(`data directory "${dir}" is read-only (${code}): the write was rolled back; make it writable and restart`, cause);
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return unavailable(`I/O error writing to data directory "${dir}" (${code}): the write was rolled back; check the disk`, cause);
  }
  return readError(dir, cause);
}

/** Errors of a read: a StorageUnavailableError when the database file is corrupt or unreadable. */
export function readError(dir: string, cause: unknown): Error {
  const code = (cause as { code?: string })?.code ?? '';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return unavailable(
      `the database in data directory "${dir}" is corrupt (${code}): stop hcm-runner, restore "${dir}/hcm-runner.db" from a backup or move it away, and start again`,
      cause,
    );
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN' || code === 'EIO') {
    return unavailable(`cannot read the database in data directory "${dir}" (${code}): check the disk and the file's permissions`, cause);
  }
  return cause instanceof Error ? cause : new Error(String(cause));
}

function unavailable(message: string, cause: unknown): StorageUnavailableError {
  const err = new StorageUnavailableError(message, { cause });
  const code = (cause as { code?: string })?.code;
  if (code) (err as Error & { code?: string }).code = code;
  return err;
}

function withCause(err: Error, cause: unknown): Error {
  (err as Error & { cause?: unknown }).cause = cause;
  const code = (cause as { code?: string })?.code;
  if (code) (err as Error & { code?: string }).code = code;
  return err;
}
