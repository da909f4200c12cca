// Hot Path deck: one slide at a time, keys, deep links (#5 = fifth slide), and a presenter view
// (?presenter, or key p) kept in sync with the audience window both ways. Plain JS, no build step.
(function () {
  'use strict';
  var WIDTH = 1280, HEIGHT = 720;
  var body = document.body;
  var deckId = body.dataset.deck || 'deck';
  var stage = document.getElementById('hp-stage');
  var box = document.getElementById('hp-slides');
  var counter = document.getElementById('hp-counter');
  var slides = Array.prototype.slice.call(box.querySelectorAll(':scope > .hp-slide'));
  var notes = JSON.parse(document.getElementById('hp-notes').textContent || '[]');
  // Copies taken before live.js mounts its widgets: the presenter's "next" preview is built from these.
  var pristine = slides.map(function (s) { return s.innerHTML; });
  var presenter = new URLSearchParams(location.search).has('presenter');
  var current = -1;
  var peers = []; // windows reached with postMessage: the presenter we opened, or our opener
  var nextBox, notesView;

  function clamp(n) { return Math.min(Math.max(n, 1), slides.length); }

  function fromHash() {
    var m = /^#(?:slide-)?(\d+)$/.exec(location.hash);
    return clamp(m ? Number(m[1]) : 1);
  }

  // Makes a slide fit its 1280x720 box: a code block too wide shrinks on its own (to 70%), then wraps;
  // then the whole slide's type shrinks (down to half) until nothing overflows.
  function fit(slide) {
    Array.prototype.forEach.call(slide.querySelectorAll('pre'), function (pre) {
      pre.classList.remove('hp-wrap');
      shrink(pre, '--hp-pre', 0.7, function () { return pre.scrollWidth > pre.clientWidth + 1; });
      if (pre.scrollWidth > pre.clientWidth + 1) pre.classList.add('hp-wrap');
    });
    shrink(slide, '--hp-fit', 0.5, function () { return overflows(slide); });
  }
  function shrink(el, property, floor, tooBig) {
    var f = 1;
    el.style.setProperty(property, '1');
    while (f > floor + 0.001 && tooBig()) {
      f -= 0.05;
      el.style.setProperty(property, f.toFixed(2));
    }
  }
  function overflows(el) {
    if (el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1) return true;
    return Array.prototype.some.call(el.querySelectorAll('table'), function (x) { return x.scrollWidth > x.clientWidth + 1; });
  }

  function scaleInto(container, frame) {
    var r = container.getBoundingClientRect();
    frame.style.transform = 'translate(-50%, -50%) scale(' + Math.min(r.width / WIDTH, r.height / HEIGHT) + ')';
  }
  function rescale() {
    scaleInto(stage, box);
    if (nextBox) scaleInto(nextBox.parentNode, nextBox);
  }

  // how: 'user' (push a history entry, tell the other window), 'history' (back/forward: tell the other
  // window), 'remote' (the other window moved), 'load'.
  function go(n, how) {
    n = clamp(n);
    var hash = '#' + n;
    if (location.hash !== hash) history[how === 'user' ? 'pushState' : 'replaceState'](null, '', hash);
    if (n - 1 !== current) {
      if (current >= 0) slides[current].classList.remove('hp-current');
      current = n - 1;
      slides.forEach(function (s, i) { s.setAttribute('aria-hidden', String(i !== current)); });
      slides[current].classList.add('hp-current');
      fit(slides[current]);
      counter.textContent = n + ' / ' + slides.length;
      body.dataset.slide = String(n);
      if (presenter) showPresenterPanes();
      document.dispatchEvent(new CustomEvent('hp:slide', { detail: { slide: n, count: slides.length, element: slides[current] } }));
    }
    if (how === 'user' || how === 'history') send({ slide: n });
  }

  // Sync. BroadcastChannel reaches every window of the deck on the same origin (the hub). A file://
  // page may get an opaque origin, so the windows that opened each other also use postMessage.
  var channel = 'BroadcastChannel' in window ? new BroadcastChannel('hotpath-deck:' + deckId) : null;
  function send(msg) {
    msg.hp = 'deck';
    msg.deck = deckId;
    if (channel) channel.postMessage(msg);
    peers.forEach(function (w) {
      try { if (!w.closed) w.postMessage(msg, '*'); } catch (e) { /* the other window is gone */ }
    });
  }
  function receive(msg, source) {
    if (!msg || msg.hp !== 'deck' || msg.deck !== deckId) return;
    if (source && peers.indexOf(source) < 0) peers.push(source);
    if (msg.hello) send({ slide: current + 1 });
    else if (typeof msg.slide === 'number') go(msg.slide, 'remote');
  }
  if (channel) channel.onmessage = function (e) { receive(e.data); };
  window.addEventListener('message', function (e) { receive(e.data, e.source); });
  if (window.opener) peers.push(window.opener);

  function openPresenter() {
    if (presenter) return;
    var url = location.href.split(/[?#]/)[0] + '?presenter#' + (current + 1);
    var w = window.open(url, 'hp-presenter-' + deckId, 'popup,width=1280,height=800');
    if (w && peers.indexOf(w) < 0) peers.push(w);
  }

  function setUpPresenter() {
    body.classList.add('hp-presenter');
    document.title = 'Presenter · ' + document.title;
    var next = document.createElement('div');
    next.id = 'hp-next-slide';
    nextBox = document.createElement('div');
    nextBox.className = 'hp-frame';
    next.appendChild(nextBox);
    notesView = document.createElement('div');
    notesView.id = 'hp-notes-view';
    body.appendChild(next);
    body.appendChild(notesView);

    var bar = document.getElementById('hp-bar');
    var timer = document.createElement('button');
    timer.id = 'hp-timer';
    timer.title = 'Elapsed time; click to restart';
    var clock = document.createElement('span');
    clock.id = 'hp-clock';
    bar.appendChild(timer);
    bar.appendChild(clock);
    var started = Date.now();
    timer.addEventListener('click', function () { started = Date.now(); tick(); timer.blur(); });
    function two(n) { return (n < 10 ? '0' : '') + n; }
    function tick() {
      var s = Math.floor((Date.now() - started) / 1000);
      timer.textContent = (s >= 3600 ? Math.floor(s / 3600) + ':' : '') + two(Math.floor(s / 60) % 60) + ':' + two(s % 60);
      clock.textContent = new Date().toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    }
    tick();
    setInterval(tick, 1000);
    if (window.ResizeObserver) new ResizeObserver(rescale).observe(next);
  }

  function showPresenterPanes() {
    var i = current + 1;
    if (i < slides.length) {
      nextBox.innerHTML = '<section class="hp-slide hp-current">' + pristine[i] + '</section>';
      // Live runs belong to the real slide; the preview only shows what the block says.
      nextBox.querySelectorAll('.hp-demo').forEach(function (d) { d.className = 'hp-demo-preview'; });
      fit(nextBox.firstChild);
    } else {
      nextBox.innerHTML = '<div class="hp-end">End of the deck</div>';
    }
    notesView.innerHTML = notes[current] || '<p class="hp-muted">No notes for this slide.</p>';
    notesView.scrollTop = 0;
  }

  document.addEventListener('keydown', function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t.closest && t.closest('input, textarea, select, [contenteditable]')) return;
    var onControl = t.closest && t.closest('button, a, summary');
    switch (e.key) {
      case 'ArrowRight': case 'ArrowDown': case 'PageDown': go(current + 2, 'user'); break;
      case 'ArrowLeft': case 'ArrowUp': case 'PageUp': go(current, 'user'); break;
      case ' ':
        if (onControl) return; // space presses the focused button (a live-run widget's)
        go(e.shiftKey ? current : current + 2, 'user');
        break;
      case 'Home': go(1, 'user'); break;
      case 'End': go(slides.length, 'user'); break;
      case 'p': case 'P': openPresenter(); break;
      case 'f': case 'F':
        if (document.fullscreenElement) document.exitFullscreen();
        else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen();
        break;
      default: return;
    }
    e.preventDefault();
  });
  // The buttons give the focus back, so that space keeps meaning "next slide" after a click.
  document.getElementById('hp-prev').addEventListener('click', function (e) { go(current, 'user'); e.currentTarget.blur(); });
  document.getElementById('hp-next').addEventListener('click', function (e) { go(current + 2, 'user'); e.currentTarget.blur(); });
  // The back and forward buttons, and a hash typed into the address bar.
  window.addEventListener('popstate', function () { go(fromHash(), 'history'); });
  window.addEventListener('hashchange', function () { go(fromHash(), 'history'); });
  window.addEventListener('resize', rescale);
  window.addEventListener('beforeprint', function () { body.classList.add('hp-printing'); slides.forEach(fit); });
  window.addEventListener('afterprint', function () { body.classList.remove('hp-printing'); });

  if (presenter) setUpPresenter();
  rescale();
  var linked = /^#(?:slide-)?\d+$/.test(location.hash);
  go(fromHash(), 'load');
  // A window opened on a given slide tells the others; one opened without asks where they are.
  send(linked ? { slide: current + 1 } : { hello: true });

  // For live.js and the browser tests.
  window.HotPathDeck = {
    go: function (n) { go(n, 'user'); },
    current: function () { return current + 1; },
    count: slides.length,
    refit: function () { fit(slides[current]); },
  };
})();
