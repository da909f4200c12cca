// `npm run slides:build`: the decks of slides/ as self-contained HTML for presenting offline (file://).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs, type CommandSpec } from './args.ts';
import { dim, red } from './format.ts';
import { deckPage, indexPage, listDecks, loadDeck } from './hub/slides.ts';
import { ROOT } from './paths.ts';
import { UsageError } from './usage-error.ts';

const NAME = 'slides:build';
const SPEC: Record<string, CommandSpec> = {
  [NAME]: {
    summary: 'write every deck in slides/ as one self-contained HTML file, plus an index.html',
    args: [],
    flags: { out: { value: 'DIR', description: 'where to write (default dist/slides); created if missing' } },
  },
};

/** Relative to where the user is when that is shorter, else absolute. */
function shown(file: string): string {
  const relative = path.relative(process.env.INIT_CWD ?? process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

function help(): string {
  const flags = Object.entries(SPEC[NAME]!.flags).map(([name, f]) => `  --${name}${f.value ? ` ${f.value}` : ''}  ${f.description}`);
  return [
    `npm run slides:build [-- --out DIR]`,
    '',
    `Writes ${SPEC[NAME]!.summary}.`,
    'Each page works opened from disk (CSS, JS and highlighting inlined, no network request): arrow keys,',
    'space, PageUp/PageDown, Home/End to move, #N in the URL for slide N, p for the presenter view.',
    'Live demos show their terminal command; they run in the hub (npm start).',
    '',
    'Flags:',
    ...flags,
    '  --help     this text',
    '',
  ].join('\n');
}

export function buildSlides(outDir: string, log: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): string[] {
  const started = performance.now();
  mkdirSync(outDir, { recursive: true });
  const decks = listDecks();
  if (decks.length === 0) throw new Error('no decks found in slides/');
  const written: string[] = [];
  const write = (name: string, html: string) => {
    const file = path.join(outDir, name);
    writeFileSync(file, html);
    written.push(file);
    log(`wrote ${shown(file)} ${dim(`(${Math.round(Buffer.byteLength(html) / 1024)} KB)`)}`);
  };
  const summaries = decks.map((info) => {
    const deck = loadDeck(info.id)!; // listed just above, so it exists
    write(`${info.id}.html`, deckPage(info.id, deck, 'static'));
    return { id: info.id, title: deck.title, slides: deck.slides.length };
  });
  write('index.html', indexPage(summaries));
  log(`${decks.length} decks and an index in ${Math.round(performance.now() - started)} ms; open ${shown(path.join(outDir, 'index.html'))}`);
  return written;
}

function main(argv: string[]): number {
  try {
    const args = parseArgs([NAME, ...argv], SPEC);
    if (args.command === 'help') {
      process.stdout.write(help());
      return 0;
    }
    const out = args.flags.out;
    if (out === '') throw new UsageError('--out needs a directory: --out DIR');
    // npm runs scripts from the package root; a relative --out means relative to where the user typed it.
    buildSlides(typeof out === 'string' ? path.resolve(process.env.INIT_CWD ?? process.cwd(), out) : path.join(ROOT, 'dist', 'slides'));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${red('error:')} ${error.message}\n${dim('npm run slides:build -- --help for the options')}\n`);
      return 2;
    }
    process.stderr.write(`${red('error:')} ${(error as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
