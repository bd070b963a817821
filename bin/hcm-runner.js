#!/usr/bin/env node
// The CLI ships as TypeScript and runs through tsx's loader, so `npx hcm-runner` works right
// after `npm install` with no build step to remember.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
