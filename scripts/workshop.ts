// Entry point of the workshop CLI (npm run workshop, npm start).
import { cli } from './cli.ts';

await cli();
