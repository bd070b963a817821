/** gitCommitOf reads HEAD from git's own files: loose refs, packed refs, detached HEAD, worktrees (a `.git` file), no checkout. */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitCommitOf } from '../../src/runtime/git-commit.js';
import { tempDir, write } from '../triggers/helpers.js';

const dirs: Array<{ remove(): void }> = [];
afterAll(() => {
  for (const d of dirs) d.remove();
});

function repo() {
  const d = tempDir('hcm-git-');
  dirs.push(d);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: d.path,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e.test', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e.test' },
    }).trim();
  git('init', '-q', '-b', 'main');
  mkdirSync(join(d.path, 'integrations'));
  write(join(d.path, 'integrations'), 'a.yaml', 'name: a\n');
  git('add', '.');
  git('commit', '-q', '-m', 'one');
  return { path: d.path, git };
}

describe('gitCommitOf', () => {
  it('follows HEAD to a loose ref, then to packed-refs, and reads a detached HEAD, from a subfolder', () => {
    const r = repo();
    const head = r.git('rev-parse', 'HEAD');
    expect(gitCommitOf(join(r.path, 'integrations'))).toBe(head);
    r.git('pack-refs', '--all', '--prune');
    expect(gitCommitOf(join(r.path, 'integrations'))).toBe(head);
    r.git('checkout', '-q', '--detach');
    expect(gitCommitOf(r.path)).toBe(head);
  });

  it('reads a worktree (a .git file naming its git folder, refs in the common folder)', () => {
    const r = repo();
    const wt = tempDir('hcm-git-wt-');
    dirs.push(wt);
    const path = join(wt.path, 'tree');
    r.git('worktree', 'add', '-q', '-b', 'other', path);
    write(path, 'b.yaml', 'name: b\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e.test', 'commit', '-q', '-am', 'x', '--allow-empty'], { cwd: path });
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: path, encoding: 'utf8' }).trim();
    expect(head).not.toBe(r.git('rev-parse', 'HEAD'));
    expect(gitCommitOf(join(path, 'integrations'))).toBe(head);
  });

  it('is undefined outside a checkout and for a HEAD it cannot resolve', () => {
    const d = tempDir('hcm-no-git-');
    dirs.push(d);
    expect(gitCommitOf(d.path)).toBeUndefined();
    mkdirSync(join(d.path, '.git'));
    write(join(d.path, '.git'), 'HEAD', 'ref: refs/heads/../../../etc/passwd\n');
    expect(gitCommitOf(d.path)).toBeUndefined();
  });
});
