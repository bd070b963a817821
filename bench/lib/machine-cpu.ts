/**
 * CPU time of the whole machine (every core, every process). The end-to-end scenario divides it
 * by executions to show what one execution costs the machine — the runner, the HCM sandbox and
 * the load generator together — and so the rate the cores could carry at that cost.
 *
 * From /proc/stat where there is one: it also counts the time spent in soft interrupts (the
 * kernel's network stack, a good part of a loopback benchmark) and steal, which `os.cpus()`
 * leaves out. Elsewhere from `os.cpus()`.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface MachineCpu {
  /** Busy time summed over the cores, µs. */
  busyUs: number;
  /** Wall time summed over the cores (busy + idle), µs. */
  totalUs: number;
}

/** USER_HZ: /proc/stat counts in 1/100 s on Linux. */
const TICK_US = 10_000;

export function machineCpu(): MachineCpu {
  try {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busyUs: busy * TICK_US, totalUs: (busy + idle! + iowait!) * TICK_US };
  } catch {
    let busy = 0;
    let idle = 0;
    for (const c of cpus()) {
      busy += c.times.user + c.times.nice + c.times.sys + c.times.irq;
      idle += c.times.idle;
    }
    return { busyUs: busy * 1000, totalUs: (busy + idle) * 1000 };
  }
}
