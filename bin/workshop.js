#!/usr/bin/env node
// The `workshop` command: registers tsx, then runs the TypeScript CLI as is (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../scripts/workshop.ts');
