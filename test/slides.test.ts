// The decks: splitting, notes, highlighting, demo placeholders, the pages, and the static export.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMarkdown } from '../scripts/hub/markdown.ts';
import { deckPage, indexPage, listDecks, loadDeck, renderDeck, splitSlides } from '../scripts/hub/slides.ts';
import { ROOT } from '../scripts/paths.ts';

const IDS = ['01-seed-service-slows-down', '02-worker-heap-climbs'];
const deck = (source: string) => renderDeck(source, { source: 'slides/test.md', exerciseIds: IDS });
const fence = '```';

const SAMPLE = `# The title *deck*

Intro

::: notes
Say hello.
:::

---

## Code

${fence}ts
const a = 1;
---
const b = 2;
${fence}

---

## Demo

::: demo 01
${fence}sh
npm run workshop -- demo 01
${fence}
:::

::: notes
Run it.
:::
`;

describe('splitting a deck into slides', () => {
  it('splits on --- lines, not on --- inside a code fence, and drops empty slides', () => {
    const parts = splitSlides(SAMPLE);
    expect(parts.map((p) => p.text.split('\n').find((l) => l.startsWith('#')))).toEqual(['# The title *deck*', '## Code', '## Demo']);
    expect(parts[1]!.text).toContain('const a = 1;\n---\nconst b = 2;');
    expect(parts.map((p) => p.line)).toEqual([0, 9, 19]);
    expect(splitSlides('a\n---\n\n---\n---\nb\r\n---  \r\nc').map((p) => p.text.trim())).toEqual(['a', 'b', 'c']);
    // A ~~~ fence is closed only by ~~~, and a longer fence by one at least as long.
    expect(splitSlides('~~~\n```\n---\n~~~\nx\n---\ny')).toHaveLength(2);
    expect(splitSlides('````\n```\n---\n````\n---\ny')).toHaveLength(2);
  });

  it('keeps the first # heading as the title, as plain text', () => {
    expect(deck(SAMPLE).title).toBe('The title deck');
    expect(deck('## only h2\n\ntext').title).toBe('Untitled deck');
  });
});

describe('notes', () => {
  it('takes ::: notes out of the slide and into its notes', () => {
    const { slides } = deck(SAMPLE);
    expect(slides).toHaveLength(3);
    expect(slides[0]!.html).toContain('<h1>The title <em>deck</em></h1>');
    expect(slides[0]!.html).not.toContain('Say hello');
    expect(slides[0]!.notes).toBe('<p>Say hello.</p>\n');
    expect(slides[1]!.notes).toBe('');
    expect(slides[2]!.notes).toContain('Run it.');
  });
});

describe('markdown', () => {
  const md = createMarkdown();

  it('highlights the languages the repo uses and escapes an unknown one', () => {
    expect(md.render(`${fence}ts\nconst x: number = 1;\n${fence}`)).toContain('<span class="hljs-keyword">const</span>');
    expect(md.render(`${fence}sh\nnpm run workshop -- demo 01 # go\n${fence}`)).toContain('<span class="hljs-comment"># go</span>');
    expect(md.render(`${fence}json\n{"a": 1}\n${fence}`)).toContain('hljs-attr');
    expect(md.render(`${fence}diff\n-old\n+new\n${fence}`)).toContain('<span class="hljs-addition">+new</span>');
    const unknown = md.render(`${fence}nosuchlang\n<b>x</b> & y\n${fence}`);
    expect(unknown).toBe('<pre class="hljs"><code class="hljs">&lt;b&gt;x&lt;/b&gt; &amp; y\n</code></pre>\n');
    expect(md.render(`${fence}text\n<i>\n${fence}`)).toContain('&lt;i&gt;');
  });

  it('renders tables', () => {
    expect(md.render('| a | b |\n|---|---|\n| 1 | 2 |')).toContain('<td>1</td>');
  });

  it('escapes raw HTML except bare <details>/<summary>/<strong>-like tags', () => {
    expect(md.render('<script>alert(1)</script>')).not.toContain('<script>');
    expect(md.render('hi <img src=x onerror=alert(1)> there')).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(md.render('<div onclick="x()">\n\nhi\n\n</div>')).not.toContain('<div onclick');
    expect(md.render('<!-- c -->')).toContain('&lt;!-- c --&gt;');
    expect(md.render('GET /users/<user> now')).toContain('/users/&lt;user&gt; now');
    const details = md.render('<details>\n<summary><strong>Take away</strong></summary>\n\ntext\n\n</details>');
    expect(details).toContain('<details>\n<summary><strong>Take away</strong></summary>');
    expect(details).toContain('</details>');
    expect(md.render('<details open>\n\nx\n\n</details>')).toContain('&lt;details open&gt;');
  });

  it('refuses javascript: links and opens web links in a new tab', () => {
    expect(md.render('[x](javascript:alert(1))')).not.toContain('href="javascript');
    expect(md.render('[docs](https://nodejs.org/api/events.html)')).toContain('target="_blank" rel="noopener noreferrer"');
  });
});

describe('::: demo', () => {
  it('becomes the live-demo placeholder for a known exercise, with its content as the fallback', () => {
    const html = deck(SAMPLE).slides[2]!.html;
    expect(html).toContain('<div class="hp-demo" data-exercise="01-seed-service-slows-down" data-command="npm run workshop -- demo 01"><div class="hp-demo-fallback">');
    expect(html).toContain('npm run workshop -- demo 01');
    expect(html.indexOf('hp-demo-fallback')).toBeLessThan(html.indexOf('<pre'));
    // accepts the slug and a number without its zero; an empty block gets the command as its fallback
    const empty = deck('::: demo floating-s3-upload\n:::\n').slides[0]!.html;
    expect(empty).toContain('data-exercise="02-worker-heap-climbs"');
    expect(empty).toContain('<code>npm run workshop -- demo 02</code>');
    expect(deck('::: demo 1\n:::').slides[0]!.html).toContain('data-exercise="01-seed-service-slows-down"');
  });

  it('names the deck and the line of an unknown exercise', () => {
    expect(() => deck('# t\n\n---\n\n## x\n\n::: demo 42\n:::\n')).toThrow(/^slides\/test\.md:7: unknown exercise "42"/);
    expect(() => deck('::: demo\n:::')).toThrow('slides/test.md:1: "::: demo" needs an exercise');
  });

  it('resolves against the real exercises by default', () => {
    expect(renderDeck('::: demo 01\n:::').slides[0]!.html).toContain('data-exercise="01-seed-service-slows-down"');
  });
});

describe('the decks in slides/', () => {
  const decks = listDecks();

  it('lists every deck, sorted, with its title', () => {
    const files = readdirSync(path.join(ROOT, 'slides')).filter((f) => f.endsWith('.md')).sort();
    expect(decks.map((d) => `${d.id}.md`)).toEqual(files);
    expect(decks.find((d) => d.id === '01-seed-service-slows-down')?.title).toBe('01 · The seed service that slows down');
    for (const d of decks) expect(d.title).not.toBe('Untitled deck');
  });

  it('renders every deck: slides with notes, and a live demo in each exercise deck', () => {
    for (const info of decks) {
      const rendered = loadDeck(info.id)!;
      expect(rendered.slides.length, info.id).toBeGreaterThan(3);
      expect(rendered.slides.every((s) => s.html.trim() !== ''), info.id).toBe(true);
      expect(rendered.slides.filter((s) => s.notes !== '').length, info.id).toBeGreaterThan(rendered.slides.length / 2);
      for (const s of rendered.slides) expect(s.html, info.id).not.toMatch(/:::|class="notes"/);
      if (/^\d\d-/.test(info.id) && !info.id.startsWith('00-')) {
        expect(rendered.slides.some((s) => s.html.includes(`data-exercise="${info.id}"`)), `${info.id} has a ::: demo`).toBe(true);
      }
    }
  });

  it('loads only a deck that exists, never a path', () => {
    expect(loadDeck('../package')).toBeUndefined();
    expect(loadDeck('nope')).toBeUndefined();
  });
});

describe('pages', () => {
  const rendered = loadDeck('01-seed-service-slows-down')!;
  const staticPage = deckPage('01-seed-service-slows-down', rendered, 'static');
  /** The page without the notes' JSON island: what a browser lays out. */
  const visible = (html: string) => html.replace(/<script type="application\/json" id="hp-notes">[\s\S]*?<\/script>/, '');

  it('a static page is self-contained: no external src or href, no import, no url()', () => {
    expect(staticPage).not.toMatch(/\ssrc=/);
    expect(staticPage).not.toMatch(/<link\b/);
    expect(staticPage).not.toMatch(/@import|url\(/);
    const hrefs = [...staticPage.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs.every((h) => !/^(https?:)?\/\//.test(h!))).toBe(true);
    expect(staticPage).toContain('.hp-slide {'); // deck.css inlined
    expect(staticPage).toContain('.hljs-keyword'); // the highlight theme inlined
    expect(staticPage).toContain("'use strict'"); // deck.js inlined
  });

  it('a hub page links the hub assets, live.js after deck.js', () => {
    const hub = deckPage('01-seed-service-slows-down', rendered, 'hub');
    expect(hub).toContain('<link rel="stylesheet" href="/assets/deck.css">');
    expect(hub).toContain('<link rel="stylesheet" href="/assets/highlight.css">');
    expect(hub.indexOf('/assets/deck.js')).toBeLessThan(hub.indexOf('/assets/live.js'));
    expect(hub).not.toContain("'use strict'");
  });

  it('one section per slide, and the notes only inside the JSON island', () => {
    expect(staticPage.match(/<section class="hp-slide"/g)).toHaveLength(rendered.slides.length);
    expect(staticPage).toContain('<section class="hp-slide" id="slide-1" data-slide="1"');
    const note = 'Collect a few guesses before you';
    expect(rendered.slides[1]!.notes).toContain(note);
    expect(visible(staticPage)).not.toContain(note);
    const json = /<script type="application\/json" id="hp-notes">([\s\S]*?)<\/script>/.exec(staticPage)![1]!;
    expect(JSON.parse(json)).toEqual(rendered.slides.map((s) => s.notes));
  });

  it('escapes what could break out: the title, the id, </script> inside notes', () => {
    const evil = renderDeck('# A <b>&</b> title\n\n::: notes\n</script><script>alert(1)</script>\n:::', { exerciseIds: IDS });
    const page = deckPage('x"><script>', evil, 'static');
    expect(page).toContain('<title>A &amp; title · Hot Path</title>');
    expect(page).toContain('data-deck="x&quot;&gt;&lt;script&gt;"');
    expect(page.match(/<script/g)).toHaveLength(2); // the notes island and deck.js
    expect(page).not.toContain('alert(1)</script>');
  });

  it('the index links every deck', () => {
    const html = indexPage([{ id: '01-seed-service-slows-down', title: '01 · <x>', slides: 15 }]);
    expect(html).toContain('<a href="01-seed-service-slows-down.html">01 · &lt;x&gt;</a>');
  });
});

describe('npm run slides:build', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'hotpath-slides-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const build = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/slides-build.ts', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', INIT_CWD: ROOT }, encoding: 'utf8', timeout: 60_000 });

  it('writes one page per deck and an index, and says what it wrote', () => {
    const result = build('--out', out);
    expect(result.status, result.stderr).toBe(0);
    const decks = listDecks();
    for (const d of decks) {
      expect(existsSync(path.join(out, `${d.id}.html`))).toBe(true);
      expect(result.stdout).toContain(`${d.id}.html`);
    }
    expect(readFileSync(path.join(out, 'index.html'), 'utf8')).toContain('01-seed-service-slows-down.html');
    expect(result.stdout).toMatch(new RegExp(`${decks.length} decks and an index in \\d+ ms`));
  });

  it('--help, and a bad option exits 2 with a clear message', () => {
    const help = build('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--out DIR');
    const bad = build('--outt', out);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown flag "--outt"');
    expect(bad.stderr).toContain('Did you mean "--out"?');
    expect(build('--out').status).toBe(2);
    expect(build('extra').status).toBe(2);
  });
});
