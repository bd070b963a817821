/**
 * The git commit checked out in the integrations folder, read from the files git keeps (HEAD, the
 * ref it names, packed-refs) without running git: read once per reload (the registry stamps it on
 * the versions it loads, ExecutionRecord.version), never per execution. Anything unexpected —
 * no checkout, a ref that cannot be resolved, a file that cannot be read — gives undefined: the
 * version then has its sha256 only.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** A ref name as HEAD may name it, read as a path below the git folder: plain characters, no `..`. */
const REF_NAME = /^refs\/[\w./+@-]+$/;
/** Folders searched upwards for `.git` (an integrations folder inside a repository). */
const MAX_DEPTH = 32;
/** packed-refs past this size is not read (a repository with huge numbers of refs). */
const MAX_PACKED_REFS_BYTES = 16 * 1024 * 1024;

export function gitCommitOf(folder: string): string | undefined {
  try {
    const git = findGitDir(resolve(folder));
    if (!git) return undefined;
    const head = readSmall(join(git.dir, 'HEAD'))?.trim();
    if (!head) return undefined;
    if (OBJECT_ID.test(head)) return head; // detached HEAD
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (!ref || !REF_NAME.test(ref) || ref.includes('..')) return undefined;
    for (const dir of git.dir === git.common ? [git.dir] : [git.dir, git.common]) {
      const loose = readSmall(join(dir, ref))?.trim();
      if (loose && OBJECT_ID.test(loose)) return loose;
    }
    return packedRef(git.common, ref);
  } catch {
    return undefined;
  }
}

/** `.git` in the folder or above it: a directory, or a file `gitdir: …` (worktrees, submodules). */
function findGitDir(start: string): { dir: string; common: string } | undefined {
  let at = start;
  for (let i = 0; i < MAX_DEPTH; i++) {
    const candidate = join(at, '.git');
    const st = statOrUndefined(candidate);
    if (st?.isDirectory()) return { dir: candidate, common: candidate };
    if (st?.isFile()) {
      const target = /^gitdir:\s*(.+)$/m.exec(readSmall(candidate) ?? '')?.[1]?.trim();
      if (!target) return undefined;
      const dir = isAbsolute(target) ? target : resolve(at, target);
      const common = readSmall(join(dir, 'commondir'))?.trim();
      return { dir, common: common ? resolve(dir, common) : dir };
    }
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
  return undefined;
}

function packedRef(common: string, ref: string): string | undefined {
  const path = join(common, 'packed-refs');
  const st = statOrUndefined(path);
  if (!st?.isFile() || st.size > MAX_PACKED_REFS_BYTES) return undefined;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(space + 1).trim() === ref) {
      const id = line.slice(0, space);
      return OBJECT_ID.test(id) ? id : undefined;
    }
  }
  return undefined;
}

/** HEAD, a loose ref, a `.git` file, `commondir`: each a line; more than 4 KiB is not one of them. */
function readSmall(path: string): string | undefined {
  const st = statOrUndefined(path);
  if (!st?.isFile() || st.size > 4096) return undefined;
  return readFileSync(path, 'utf8');
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
