import hljs from 'highlight.js/lib/common';
import markdownIt, { type MarkdownIt } from 'markdown-it';

/**
 * The one markdown renderer of the hub: slides, exercise briefs and hints.
 *
 * Raw HTML: the briefs fold their spoiler into `<details><summary><strong>…</strong></summary>`, so
 * plain `html: false` would print those tags as text. Instead HTML is parsed, and a raw HTML token
 * is passed through only when every tag in it is a bare tag (no attributes) from ALLOWED_TAGS; any
 * other raw HTML (a `<script>`, an `onclick=`, a comment, a `<placeholder>` written in prose) is
 * shown escaped, as text. The sources are files of this repository, but a trainee edits them too.
 */
const ALLOWED_TAGS = new Set(['details', 'summary', 'strong', 'em', 'b', 'i', 'code', 'kbd', 'br', 'sub', 'sup']);

/** Every `<` in the HTML must open a bare allowed tag: `<details>`, `</summary>`, `<br/>`. */
function onlyAllowedTags(html: string): boolean {
  const lt = html.split('<').length - 1;
  const tags = html.match(/<\/?([a-z]+)\s*\/?>/gi) ?? [];
  return tags.length === lt && tags.every((tag) => ALLOWED_TAGS.has(tag.replace(/[</>\s]/g, '').toLowerCase()));
}

/** Code highlighting: a language highlight.js knows (ts, js, sh/bash, json, diff, text…) or escaped plain text. */
function highlight(md: MarkdownIt, code: string, lang: string): string {
  const name = lang.trim().toLowerCase();
  const language = name && hljs.getLanguage(name) ? name : '';
  const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : md.utils.escapeHtml(code);
  const cls = language ? ` language-${md.utils.escapeHtml(language)}` : '';
  // Starts with <pre, so markdown-it uses it as is instead of wrapping it again.
  return `<pre class="hljs"><code class="hljs${cls}">${body}</code></pre>`;
}

export function createMarkdown(): MarkdownIt {
  const md: MarkdownIt = markdownIt({
    html: true, // filtered below: only bare allowlisted tags survive
    linkify: false, // prose is full of http://127.0.0.1:$PORT examples that must not become links
    typographer: false,
    highlight: (code, lang) => highlight(md, code, lang),
  });
  const escapeUnlessAllowed = (content: string) => (onlyAllowedTags(content) ? content : md.utils.escapeHtml(content));
  md.renderer.rules.html_block = (tokens, idx) => escapeUnlessAllowed(tokens[idx].content);
  md.renderer.rules.html_inline = (tokens, idx) => escapeUnlessAllowed(tokens[idx].content);
  // External links open outside the deck/hub page, so a click never loses the slide or the live run.
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const href = String(tokens[idx].attrGet('href') ?? '');
    if (/^https?:\/\//i.test(href)) {
      tokens[idx].attrSet('target', '_blank');
      tokens[idx].attrSet('rel', 'noopener noreferrer');
    }
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  return md;
}
