/** Commands beyond validate and run, registered here so main.ts stays a small dispatcher. */
export {};
