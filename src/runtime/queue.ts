/** The execution queue belongs to the store (src/store/queue.ts); re-exported for the runtime. */
export { InProcessQueue, type ExecutionQueue, type QueueBinding, type QueuedJob } from '../store/queue.js';
