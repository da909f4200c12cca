// The slide decks of slides/*.md: split into slides, speaker notes apart, `::: demo NN` placeholders
// for the hub's live runs, and the HTML page that presents them (served by the hub, or exported static).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import container from 'markdown-it-container';
import type { MarkdownIt, Token } from 'markdown-it';
import { exerciseFolders, resolveExerciseId } from '../exercises.ts';
import { escapeHtml } from '../html.ts';
import { ROOT } from '../paths.ts';
import { createMarkdown } from './markdown.ts';

export const SLIDES_DIR = path.join(ROOT, 'slides');
export const ASSETS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

export interface Slide {
  /** The slide's HTML, notes left out. */
  html: string;
  /** The speaker notes as HTML ('' when the slide has none). */
  notes: string;
}

export interface Deck {
  /** Plain text of the first `#` heading. */
  title: string;
  slides: Slide[];
}

export interface DeckInfo {
  id: string;
  title: string;
  /** Absolute path of the markdown file. */
  file: string;
}

export interface RenderOptions {
  /** Names the deck in error messages, e.g. "slides/01-seed-service-slows-down.md". */
  source?: string;
  /** Exercise folder names `::: demo NN` resolves against (default: the exercises/ folders). */
  exerciseIds?: string[];
}

const DEMO_COMMAND = (id: string) => `npm run workshop -- demo ${id.slice(0, 2)}`;

let markdown: MarkdownIt | undefined;

/** The shared renderer plus the two containers decks use. */
function deckMarkdown(): MarkdownIt {
  if (markdown) return markdown;
  const md = createMarkdown();
  // The notes container is cut out of the token stream before rendering (see splitNotes), so its
  // renderer only matters if one is ever left nested somewhere else.
  md.use(container, 'notes');
  md.use(container, 'demo', {
    validate: (params: string) => params.trim().split(/\s+/, 1)[0] === 'demo',
    render: (tokens: Token[], idx: number) => {
      const token = tokens[idx]!;
      if (token.nesting !== 1) return '</div></div>\n';
      const id = md.utils.escapeHtml(String(token.attrGet('data-exercise')));
      const command = md.utils.escapeHtml(DEMO_COMMAND(id));
      const fallback = token.meta?.empty ? `<p>Live demo: run <code>${command}</code> in a terminal.</p>\n` : '';
      return `<div class="hp-demo" data-exercise="${id}" data-command="${command}"><div class="hp-demo-fallback">\n${fallback}`;
    },
  });
  markdown = md;
  return md;
}

const FENCE = /^\s*(`{3,}|~{3,})/;

/** Splits a deck into slides on `---` lines outside code fences; each slide keeps its first line number (0-based). */
export function splitSlides(source: string): { text: string; line: number }[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const slides: { text: string; line: number }[] = [];
  let start = 0;
  let fence: string | undefined;
  const push = (end: number) => {
    const text = lines.slice(start, end).join('\n');
    if (text.trim() !== '') slides.push({ text, line: start });
  };
  lines.forEach((line, i) => {
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      // A fence closes with the same character, at least as long, and nothing after it.
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
    } else if (marker) {
      fence = marker;
    } else if (/^---\s*$/.test(line)) {
      push(i);
      start = i + 1;
    }
  });
  push(lines.length);
  return slides;
}

/** Takes the `::: notes` blocks (at any depth) out of the token stream. */
function splitNotes(tokens: Token[]): { slide: Token[]; notes: Token[] } {
  const slide: Token[] = [];
  const notes: Token[] = [];
  let depth = 0;
  for (const token of tokens) {
    if (token.type === 'container_notes_open') depth++;
    else if (token.type === 'container_notes_close') depth--;
    else (depth > 0 ? notes : slide).push(token);
  }
  return { slide, notes };
}

/** Resolves `::: demo NN` to the exercise folder, or throws naming the deck and the line. */
function resolveDemos(tokens: Token[], source: string, firstLine: number, ids: string[]): void {
  tokens.forEach((token, i) => {
    if (token.type !== 'container_demo_open') return;
    const line = firstLine + (token.map?.[0] ?? 0) + 1;
    const wanted = token.info.trim().split(/\s+/)[1];
    if (!wanted) throw new Error(`${source}:${line}: "::: demo" needs an exercise, e.g. "::: demo 01"`);
    try {
      token.attrSet('data-exercise', resolveExerciseId(wanted, ids));
    } catch (error) {
      throw new Error(`${source}:${line}: ${(error as Error).message}`);
    }
    token.meta = { empty: tokens[i + 1]?.type === 'container_demo_close' };
  });
}

function firstHeading(tokens: Token[]): string | undefined {
  const at = tokens.findIndex((t) => t.type === 'heading_open' && t.tag === 'h1');
  const inline = at >= 0 ? tokens[at + 1] : undefined;
  // Plain text: the title goes into <title>, the deck list and the presenter's window name.
  return inline?.children?.map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : '')).join('').trim();
}

export function renderDeck(source: string, options: RenderOptions = {}): Deck {
  const md = deckMarkdown();
  const name = options.source ?? 'deck';
  const ids = options.exerciseIds ?? exerciseFolders();
  let title: string | undefined;
  const slides = splitSlides(source).map(({ text, line }) => {
    const env = {};
    const tokens = md.parse(text, env);
    title ??= firstHeading(tokens);
    resolveDemos(tokens, name, line, ids);
    const { slide, notes } = splitNotes(tokens);
    return { html: md.renderer.render(slide, md.options, env), notes: notes.length > 0 ? md.renderer.render(notes, md.options, env) : '' };
  });
  return { title: title ?? 'Untitled deck', slides };
}

/** The decks in slides/, sorted by id (file name without .md). */
export function listDecks(dir = SLIDES_DIR): DeckInfo[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.md') && !f.startsWith('.'));
  } catch {
    return [];
  }
  return files.sort().map((f) => {
    const file = path.join(dir, f);
    return { id: f.slice(0, -3), title: deckTitle(readFileSync(file, 'utf8')), file };
  });
}

/** The title without rendering the whole deck: the first `# ` line outside a code fence. */
function deckTitle(source: string): string {
  const first = splitSlides(source)[0];
  const tokens = first ? deckMarkdown().parse(first.text, {}) : [];
  return firstHeading(tokens) ?? 'Untitled deck';
}

/** Reads and renders one deck by id; undefined for an id that is not a deck (never a path from outside). */
export function loadDeck(id: string, dir = SLIDES_DIR): Deck | undefined {
  const info = listDecks(dir).find((d) => d.id === id);
  if (!info) return undefined;
  return renderDeck(readFileSync(info.file, 'utf8'), { source: path.relative(ROOT, info.file) || info.file });
}

export function readAsset(name: string): string {
  return readFileSync(path.join(ASSETS_DIR, name), 'utf8');
}

/** JSON that is safe inside <script>: no "</script>", no "<!--". */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Inline text for <style>/<script>: a stray closing tag would end the element early. */
function inline(text: string, tag: 'style' | 'script'): string {
  return text.replace(new RegExp(`</${tag}`, 'gi'), `<\\/${tag}`);
}

/**
 * A whole HTML page for a deck. 'hub': links the hub's /assets/ files (deck + live runs). 'static':
 * CSS and JS inlined, no request of any kind, works from file://; demo blocks show their fallback.
 * The notes travel in a JSON <script> that is never displayed; only the presenter view shows them.
 */
export function deckPage(id: string, deck: Deck, mode: 'hub' | 'static'): string {
  const slides = deck.slides
    .map((s, i) => `<section class="hp-slide" id="slide-${i + 1}" data-slide="${i + 1}" aria-roledescription="slide" aria-label="${i + 1} of ${deck.slides.length}">\n${s.html}</section>`)
    .join('\n');
  const head =
    mode === 'hub'
      ? '<link rel="stylesheet" href="/assets/highlight.css">\n<link rel="stylesheet" href="/assets/deck.css">'
      : `<style>\n${inline(readAsset('highlight.css'), 'style')}\n${inline(readAsset('deck.css'), 'style')}</style>`;
  const scripts =
    mode === 'hub'
      ? '<script src="/assets/deck.js"></script>\n<script src="/assets/live.js"></script>'
      : `<script>\n${inline(readAsset('deck.js'), 'script')}</script>`;
  const home = mode === 'hub' ? '/' : 'index.html';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(deck.title)} · Hot Path</title>
${head}
</head>
<body class="hp-deck" data-deck="${escapeHtml(id)}" data-mode="${mode}">
<main id="hp-stage"><div id="hp-slides">
${slides}
</div></main>
<footer id="hp-bar"><a id="hp-home" href="${home}" title="All decks">Hot Path</a><button id="hp-prev" type="button" aria-label="Previous slide">‹</button><span id="hp-counter" aria-live="polite">1 / ${deck.slides.length}</span><button id="hp-next" type="button" aria-label="Next slide">›</button></footer>
<script type="application/json" id="hp-notes">${scriptJson(deck.slides.map((s) => s.notes))}</script>
${scripts}
</body>
</html>
`;
}

/** The static export's index: every deck, and how to present. */
export function indexPage(decks: { id: string; title: string; slides: number }[]): string {
  const items = decks
    .map((d) => `<li><a href="${escapeHtml(d.id)}.html">${escapeHtml(d.title)}</a> <span class="hp-muted">${d.slides} slides</span></li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hot Path · slides</title>
<style>\n${inline(readAsset('deck.css'), 'style')}</style>
</head>
<body class="hp-index">
<h1>Hot Path · slides</h1>
<ol class="hp-decks">
${items}
</ol>
<p class="hp-muted">Keys: → space PageDown next · ← PageUp previous · Home End · <kbd>p</kbd> presenter view (notes, next slide, timer) · <kbd>f</kbd> full screen.
Live demos need the hub (<code>npm start</code>); here they show the terminal command.</p>
</body>
</html>
`;
}
