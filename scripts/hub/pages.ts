// The hub's HTML pages: home (exercises and progress), an exercise (brief, hints, live runs), the deck list
// and the 404. Plain template strings; every value from a file or a manifest is escaped or rendered by the
// one markdown renderer (markdown.ts), which lets through no raw HTML beyond a few bare tags.
import type { DoctorResult } from '../doctor/result.ts';
import type { Exercise } from '../exercises.ts';
import { solutionUnlocked, type ExerciseProgress } from '../progress.ts';
import { escapeHtml as e } from '../html.ts';
import { percent } from '../format.ts';
import { doctorChoicesOf, type ChoiceInfo } from './choices.ts';

export interface DeckLink {
  id: string;
  title: string;
}

export function layout(title: string, body: string, options: { scripts?: string[]; bodyClass?: string } = {}): string {
  const scripts = (options.scripts ?? []).map((name) => `<script src="/assets/${e(name)}" defer></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)} · Hot Path</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/hub.css">
<link rel="stylesheet" href="/assets/highlight.css">
${scripts}
</head>
<body class="${e(options.bodyClass ?? '')}">
<header class="hp-top"><a class="hp-home" href="/">Hot Path</a><nav><a href="/">exercises</a><a href="/slides">slides</a></nav></header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** "passed", "2 hints seen" or "not yet", and the word for data-status. */
export function statusOf(progress: ExerciseProgress): { text: string; kind: 'passed' | 'hints' | 'not-yet' } {
  if (progress.passed) return { text: 'passed', kind: 'passed' };
  if (progress.hintsShown > 0) return { text: `${progress.hintsShown} hint${progress.hintsShown === 1 ? '' : 's'} seen`, kind: 'hints' };
  return { text: 'not yet', kind: 'not-yet' };
}

export function homePage(options: {
  exercises: Exercise[];
  progressOf: (id: string) => ExerciseProgress;
  next?: Exercise;
  decks: DeckLink[];
  warning?: string;
}): string {
  const { exercises, progressOf, next, decks } = options;
  const deckIds = new Set(decks.map((d) => d.id));
  const passed = exercises.filter((x) => progressOf(x.manifest.id).passed).length;
  const rows = exercises.map((x) => {
    const { id, title, caseStudy } = x.manifest;
    const status = statusOf(progressOf(id));
    const isNext = x === next;
    return (
      `<tr class="hp-exercise${isNext ? ' hp-next' : ''}" data-exercise="${e(id)}" data-status="${status.kind}">` +
      `<td class="hp-num">${e(id.slice(0, 2))}</td>` +
      `<td><a class="hp-exercise-link" href="/exercises/${e(id)}">${e(title)}</a>${isNext ? ' <span class="hp-badge hp-next-badge">next</span>' : ''}</td>` +
      `<td>${e(caseStudy.company)}</td>` +
      `<td class="hp-status hp-status-${status.kind}">${e(status.text)}</td>` +
      `<td>${deckIds.has(id) ? `<a class="hp-deck-link" href="/slides/${e(id)}">slides</a>` : ''}</td></tr>`
    );
  });
  // The opening first, then the method, then any other introductory deck.
  const introOrder = ['00-opening', '00-method'];
  const intro = decks.filter((d) => d.id.startsWith('00-')).sort((a, b) => (introOrder.indexOf(a.id) + 1 || 99) - (introOrder.indexOf(b.id) + 1 || 99));
  const introLabel = (id: string) => (id === '00-opening' ? 'Opening: ' : id === '00-method' ? 'Method: ' : '');
  const nextBox = next
    ? `<section id="next" class="hp-callout"><h2>Next: <a id="next-link" href="/exercises/${e(next.manifest.id)}">${e(next.manifest.id.slice(0, 2))} · ${e(next.manifest.title)}</a></h2>` +
      `<p>Read its brief, run the broken server from its page, then fix <code>exercises/${e(next.manifest.id)}/server.ts</code> and run yours.</p></section>`
    : `<section id="next" class="hp-callout hp-done"><h2>Every exercise passed.</h2></section>`;
  const body = `
<h1>Hot Path <span class="hp-dim">· a hands-on Node.js performance workshop</span></h1>
${options.warning ? `<p class="hp-warning">${e(options.warning)}</p>` : ''}
${nextBox}
<section id="decks"><h2>Start here</h2><ul class="hp-deck-list">${intro.map((d) => `<li><a href="/slides/${e(d.id)}">${e(introLabel(d.id) + d.title)}</a></li>`).join('')}<li><a href="/slides">every deck</a></li></ul></section>
<section><h2>Exercises <span class="hp-dim" id="progress-summary">${passed} of ${exercises.length} passed</span></h2>
<table id="exercises" class="hp-table"><thead><tr><th>#</th><th>exercise</th><th>case study</th><th>status</th><th></th></tr></thead>
<tbody>${rows.join('')}</tbody></table></section>`;
  return layout('Exercises', body, { bodyClass: 'hp-home-page' });
}

export function exercisePage(options: {
  exercise: Exercise;
  briefHtml: string;
  progress: ExerciseProgress;
  /** The hints seen so far, as HTML. */
  hintsHtml: string[];
  deck?: DeckLink;
  /** After a pass, the stretch targets and the command that measures them (verify's words). */
  stretch?: string;
  /** The newest `doctor` result for this exercise, if one was written. */
  doctor?: DoctorResult;
}): string {
  const { exercise, briefHtml, progress, hintsHtml, deck, stretch, doctor } = options;
  const { id, title, hints, caseStudy } = exercise.manifest;
  const status = statusOf(progress);
  const shown = hintsHtml.length;
  const hintItems = hintsHtml.map((html, i) => `<li class="hp-hint" data-index="${i + 1}">${html}</li>`).join('');
  const body = `
<p class="hp-crumbs"><a href="/">exercises</a> / ${e(id.slice(0, 2))} · <span class="hp-status hp-status-${status.kind}" id="exercise-status">${e(status.text)}</span>
${deck ? ` · <a id="deck-link" href="/slides/${e(deck.id)}">slides</a>` : ''} · <a href="#hints">hints</a> · <a href="#live">live runs</a>${solutionUnlocked(progress) ? ` · <a id="solution-link" href="/exercises/${e(id)}/solution">solution</a>` : ' · <span class="hp-dim" id="solution-link">solution after a pass</span>'}</p>
${stretch ? `<section id="stretch" class="hp-callout"><h2>Passed: further</h2><pre>${e(stretch)}</pre></section>\n` : ''}<article id="brief" class="hp-brief" data-exercise="${e(id)}">${briefHtml}</article>
<section id="hints" data-exercise="${e(id)}" data-total="${hints.length}" data-shown="${shown}">
<h2>Hints</h2>
<p id="hints-status">${hintsStatus(shown, hints.length)}</p>
<ol id="hints-list">${hintItems}</ol>
<button id="hint-next" type="button"${shown >= hints.length ? ' disabled' : ''}>${e(hintButton(shown, hints.length))}</button>
<p class="hp-dim">The same hints as <code>npm run workshop -- hint ${e(id.slice(0, 2))}</code>, from gentle to explicit; the count is kept in your progress.</p>
</section>
${doctorPanel(exercise, doctor)}
<section id="live" class="hp-live" data-exercise="${e(id)}" data-title="${e(title)}" data-company="${e(caseStudy.company)}">
<h2>Live runs</h2>
<p class="hp-fallback">The live runs need JavaScript. In a terminal: <code>npm run workshop -- demo ${e(id.slice(0, 2))}</code></p>
</section>`;
  return layout(`${id.slice(0, 2)} · ${title}`, body, { scripts: ['live.js', 'exercise.js', 'doctor.js'], bodyClass: 'hp-exercise-page' });
}

/**
 * The doctor's panel: its newest result (the kinds it named, each with its evidence and the tool to use
 * next, or no problem found, or why the server could not be observed), then "Run the doctor" with the
 * choice of server (doctor.js starts the run, shows the load's seconds, and puts this panel, drawn again
 * by the hub with the new result, in place of the old one). It only renders the doctor's findings.
 */
export function doctorPanel(exercise: Exercise, result: DoctorResult | undefined): string {
  const { id } = exercise.manifest;
  const nn = id.slice(0, 2);
  const options = doctorChoicesOf(exercise)
    .map((c) => `<option value="${e(String(c.server))}"${c.server === 'mine' ? ' selected' : ''}>${e(doctorChoiceText(c))}</option>`)
    .join('');
  // Hidden until doctor.js is there to run it.
  const controls =
    `<div id="doctor-controls" class="hp-doctor-controls" hidden><label for="doctor-choice">Server</label> <select id="doctor-choice">${options}</select> ` +
    `<button id="doctor-run" type="button">Run the doctor</button> <button id="doctor-cancel" type="button" hidden>Cancel</button></div>` +
    `<p id="doctor-status" class="hp-dim" role="status" aria-live="polite"></p><p id="doctor-error" class="hp-warning" role="alert" hidden></p>`;
  const how =
    `<p class="hp-dim">It loads one server with the exercise's load and names the kind of problem its figures show, and the tool to use next, never the fix. ` +
    `One run at a time, as the live runs. In a terminal: <code>npm run workshop -- doctor ${e(nn)}</code> (add <code>--stage broken</code> for the shipped server); ` +
    `both keep their results in <code>.hotpath/results/</code>, and this panel shows the newest.</p>`;
  const open = `<section id="doctor" data-exercise="${e(id)}"><h2>The doctor</h2>`;
  if (!result) return `${open}<p id="doctor-none">No result yet.</p>${controls}${how}</section>`;
  const when = new Date(result.startedAt).toLocaleString('en-GB');
  const what = `<p id="doctor-server">${e(result.server.label)} (<code>${e(result.server.file)}</code>), Node ${e(result.node)}, ${e(when)}</p>`;
  let findings: string;
  if (result.failure) findings = `<p class="hp-warning" id="doctor-failure">Not observed: ${e(result.failure)}</p>`;
  else if (result.findings.length === 0) findings = `<p id="doctor-findings" data-kinds="">No problem found.</p>`;
  else {
    const items = result.findings
      .map((f) => `<li data-kind="${e(f.kind)}"><strong>${e(f.title)}</strong><ul>${f.evidence.map((x) => `<li>${e(x)}</li>`).join('')}</ul><p class="hp-dim">Next: ${e(f.next)}</p></li>`)
      .join('');
    findings = `<ol id="doctor-findings" data-kinds="${e(result.findings.map((f) => f.kind).join(' '))}">${items}</ol>`;
  }
  // A cluster's workers, each apart (results written before the doctor read them have none).
  const workers = result.figures?.workers ?? [];
  const workersLine = workers.length
    ? `<p id="doctor-workers" class="hp-dim">${workers.length} workers: ${workers.map((w) => `loop busy ${e(percent(w.utilization, 0))}, ${e(w.cores.toFixed(2))} cores`).join(' · ')}</p>`
    : '';
  return `${open}${what}${findings}${workersLine}${controls}${how}</section>`;
}

/** A server the doctor may run on, as the select names it. */
function doctorChoiceText(choice: ChoiceInfo): string {
  if (choice.server === 'mine') return 'your server.ts';
  if (choice.server === 'broken') return 'the shipped server (broken)';
  return `${choice.label} (${choice.title})`;
}

export function hintsStatus(shown: number, total: number): string {
  if (total === 0) return 'This exercise has no hints.';
  if (shown === 0) return `${total} hints, from gentle to explicit. None seen yet.`;
  return shown >= total ? `All ${total} hints seen.` : `${shown} of ${total} hints seen.`;
}

export function hintButton(shown: number, total: number): string {
  return shown >= total ? `All ${total} hints shown` : `Show hint ${shown + 1} of ${total}`;
}

export function slidesIndexPage(decks: DeckLink[]): string {
  const items = decks.map((d) => `<li data-deck="${e(d.id)}"><a href="/slides/${e(d.id)}">${e(d.title)}</a> <span class="hp-dim">${e(d.id)}</span></li>`);
  const body = `<h1>Slides</h1><p>Arrow keys move through a deck; a deck's own page explains its presenter view.</p><ul id="decks-list" class="hp-deck-list">${items.join('')}</ul>`;
  return layout('Slides', body);
}

/** The solution view, once unlocked: each stage by name, what it changes, and the solutions README. */
export function solutionViewPage(options: {
  exercise: Exercise;
  stages: { number: number; title: string; changesHtml: string; file: string }[];
  readmeHtml: string;
}): string {
  const { exercise, stages, readmeHtml } = options;
  const { id, title } = exercise.manifest;
  const items = stages
    .map((s) => `<li class="hp-stage" data-stage="${s.number}"><strong>Stage ${s.number}: ${e(s.title)}</strong> <code class="hp-dim">${e(s.file)}</code><p>${s.changesHtml}</p></li>`)
    .join('');
  const body = `
<p class="hp-crumbs"><a href="/">exercises</a> / <a href="/exercises/${e(id)}">${e(id.slice(0, 2))} · ${e(title)}</a> / solution</p>
<section id="stages"><h2>The stages</h2><ol class="hp-stage-list">${items}</ol>
<p class="hp-dim">Each stage's diff: <code>npm run workshop -- solution ${e(id.slice(0, 2))}</code>.</p></section>
<article id="solution" class="hp-brief" data-exercise="${e(id)}">${readmeHtml}</article>`;
  return layout(`${id.slice(0, 2)} · solution`, body);
}

export function errorPage(status: number, message: string): string {
  return layout(String(status), `<h1>${status}</h1><p class="hp-error-message">${e(message)}</p><p><a href="/">back to the exercises</a></p>`);
}
