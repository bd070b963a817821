/**
 * A server started by an npm script (`npm start`) goes down with npm. npm forwards SIGTERM and
 * SIGINT only to its direct child — a `sh -c` that dies without passing them on — and `kill -9`
 * forwards nothing, so `kill <pid of npm>` used to leave the server serving, orphaned. While npm
 * runs it is this process's parent (or the parent of that `sh`): when the parent changes, it is
 * gone. Started any other way (a service manager, `nohup`, a container's command) there is no
 * watch: there, outliving the shell that started the server can be the point.
 */
export function watchParent(onGone: () => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 500): () => void {
  if (!env.npm_lifecycle_event) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
