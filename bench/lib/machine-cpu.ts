/**
 * CPU time of the whole machine (every core, every process), from the kernel's per-core counters
 * (`os.cpus()`, milliseconds). The end-to-end scenario divides it by executions to show what one
 * execution costs the machine, the runner, the HCM sandbox and the load generator together, and
 * so the rate the cores could carry at that cost.
 */
import { cpus } from 'node:os';

export interface MachineCpu {
  /** Busy time summed over the cores (user + nice + sys + irq), µs. */
  busyUs: number;
  /** Wall time summed over the cores (busy + idle), µs. */
  totalUs: number;
}

export function machineCpu(): MachineCpu {
  let busy = 0;
  let idle = 0;
  for (const c of cpus()) {
    busy += c.times.user + c.times.nice + c.times.sys + c.times.irq;
    idle += c.times.idle;
  }
  return { busyUs: busy * 1000, totalUs: (busy + idle) * 1000 };
}
