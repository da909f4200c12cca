// Hot Path live runs: mounts a widget in every `.hp-live[data-exercise]` (the exercise page: a button per
// server and "all side by side") and `.hp-demo[data-exercise]` (a slide: one "Run the demo" button). A run
// is started with POST /api/runs and followed through server-sent events; req/s and latency are drawn
// second by second as they arrive (an SVG of our own, redrawn to the box's size), then the verdict
// tables come from the hub as HTML. Plain JS, no build step, no dependency.
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var STAGE_COLORS = ['#d9730d', '#2e8b57', '#7a4fb5', '#0e7490', '#a16207'];
  var number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  // A run started in one window (the presenter's, on the laptop) is followed by the others showing the
  // same exercise (the audience's, on the projector): each widget subscribes, the starting one announces.
  var runsChannel = 'BroadcastChannel' in window ? new BroadcastChannel('hotpath-runs') : null;
  var runListeners = [];
  if (runsChannel) runsChannel.onmessage = function (e) { runListeners.forEach(function (listener) { listener(e.data); }); };

  function colorOf(label) {
    if (label === 'broken') return '#c62828';
    if (label === 'ceiling') return '#6b7280';
    if (label === 'mine') return '#1d4ed8';
    var m = /^stage (\d+)$/.exec(label);
    return m ? STAGE_COLORS[(Number(m[1]) - 1) % STAGE_COLORS.length] : '#111827';
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVG, tag);
    for (var key in attrs) node.setAttribute(key, String(attrs[key]));
    if (parent) parent.appendChild(node);
    return node;
  }

  function ms(value) {
    return value >= 100 ? number.format(value) + ' ms' : value >= 10 ? value.toFixed(1) + ' ms' : value.toFixed(2) + ' ms';
  }

  function ensureStyles() {
    if (document.querySelector('link[data-hp-live]')) return;
    var link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = '/assets/live.css';
    link.setAttribute('data-hp-live', '');
    document.head.appendChild(link);
  }

  function postJson(url, body) {
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body || {}) }).then(function (res) {
      return res.json().then(function (json) { return { status: res.status, json: json }; }, function () { return { status: res.status, json: {} }; });
    });
  }

  // ---- The chart: one panel, a line per server, log scale (the servers differ 100x and more).

  function logTicks(min, max) {
    var ticks = [];
    for (var p = Math.floor(Math.log10(min)); p <= Math.ceil(Math.log10(max)); p++) ticks.push(Math.pow(10, p));
    return ticks;
  }

  function tickLabel(v) {
    return v >= 1000 ? number.format(v / 1000) + 'k' : v >= 1 ? number.format(v) : String(v);
  }

  /**
   * Draws `series` ({ label, points: [{ x, y, y2? }] }) into `box` at its current size. y2, when given, is
   * drawn dashed (p50 beside p99). x runs over `xMax` seconds; the first `warmup` seconds are shaded.
   */
  function drawPanel(box, options) {
    var width = Math.max(200, box.clientWidth);
    var height = Math.max(120, box.clientHeight);
    var font = parseFloat(getComputedStyle(box).fontSize) || 14;
    var m = { left: font * 3.6, right: font * 0.8, top: font * 1.6, bottom: font * 2.6 };
    var old = box.querySelector('svg');
    var root = svg('svg', { class: options.className, width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': options.title });
    var values = [];
    options.series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (p.y > 0) values.push(p.y);
        if (p.y2 > 0) values.push(p.y2);
      });
    });
    var lo = values.length ? Math.min.apply(null, values) : options.floor * 10;
    var hi = values.length ? Math.max.apply(null, values) : options.floor * 1000;
    var yMin = Math.pow(10, Math.floor(Math.log10(Math.max(options.floor, lo))));
    var yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(hi, yMin * 10))));
    var plotW = width - m.left - m.right;
    var plotH = height - m.top - m.bottom;
    var xMax = Math.max(2, options.xMax);
    var X = function (x) { return m.left + (x / xMax) * plotW; };
    var Y = function (y) { return m.top + plotH - ((Math.log10(Math.max(y, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * plotH; };

    svg('text', { x: m.left, y: font * 1.1, class: 'hp-chart-title' }, root).textContent = options.title;
    if (options.warmup > 0) {
      svg('rect', { x: X(0), y: m.top, width: X(options.warmup) - X(0), height: plotH, class: 'hp-chart-warmup' }, root);
      svg('text', { x: X(options.warmup / 2), y: m.top + font, class: 'hp-chart-note', 'text-anchor': 'middle' }, root).textContent = 'warm-up';
    }
    logTicks(yMin, yMax).forEach(function (t) {
      if (t < yMin || t > yMax) return;
      svg('line', { x1: m.left, x2: m.left + plotW, y1: Y(t), y2: Y(t), class: 'hp-chart-grid' }, root);
      svg('text', { x: m.left - font * 0.4, y: Y(t) + font * 0.35, class: 'hp-chart-tick', 'text-anchor': 'end' }, root).textContent = tickLabel(t);
    });
    var step = xMax > 20 ? 5 : xMax > 10 ? 2 : 1;
    for (var s = 0; s <= xMax; s += step) {
      svg('text', { x: X(s), y: m.top + plotH + font * 1.2, class: 'hp-chart-tick', 'text-anchor': 'middle' }, root).textContent = String(s);
    }
    svg('line', { x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH, class: 'hp-chart-axis' }, root);
    svg('text', { x: m.left + plotW / 2, y: height - font * 0.3, class: 'hp-chart-note', 'text-anchor': 'middle' }, root).textContent = options.xTitle;

    options.series.forEach(function (s) {
      var color = colorOf(s.label);
      var line = function (pick, dashed) {
        var pts = s.points.filter(function (p) { return pick(p) > 0; });
        if (pts.length === 0) return;
        var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + X(p.x).toFixed(1) + ' ' + Y(pick(p)).toFixed(1); }).join(' ');
        svg('path', { d: d, class: 'hp-chart-line' + (dashed ? ' hp-chart-dashed' : ''), stroke: color, 'data-label': s.label }, root);
        if (!dashed) {
          var last = pts[pts.length - 1];
          svg('circle', { cx: X(last.x), cy: Y(pick(last)), r: font * 0.25, fill: color }, root);
        }
      };
      line(function (p) { return p.y; }, false);
      line(function (p) { return p.y2; }, true);
    });
    if (old) box.replaceChild(root, old);
    else box.appendChild(root);
  }

  // ---- The widget.

  function mount(root) {
    if (root.getAttribute('data-hp-mounted')) return;
    root.setAttribute('data-hp-mounted', 'true');
    var exerciseId = root.getAttribute('data-exercise');
    var demoMode = root.classList.contains('hp-demo');
    ensureStyles();

    var fallback = root.querySelector('.hp-fallback, .hp-demo-fallback');
    var widget = el('div', 'hp-live-widget' + (demoMode ? ' hp-live-demo' : ''));
    var controls = el('div', 'hp-live-controls');
    var cancel = el('button', 'hp-cancel', 'Cancel the run');
    cancel.type = 'button';
    cancel.hidden = true;
    var status = el('p', 'hp-live-status', demoMode ? '' : 'Choose a server to run under the exercise\'s load.');
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    var error = el('p', 'hp-live-error');
    error.setAttribute('role', 'alert');
    error.hidden = true;
    var chart = el('div', 'hp-live-chart');
    chart.hidden = true;
    var legend = el('ul', 'hp-legend');
    var panels = el('div', 'hp-chart-panels');
    var rpsBox = el('div', 'hp-chart-box hp-chart-box-rps');
    var latencyBox = el('div', 'hp-chart-box hp-chart-box-latency');
    panels.appendChild(rpsBox);
    panels.appendChild(latencyBox);
    chart.appendChild(legend);
    chart.appendChild(panels);
    var report = el('div', 'hp-live-report');
    // On a slide there is no room for both: once the verdict is in, it replaces the chart; two tabs switch.
    var tabs = el('div', 'hp-live-tabs');
    tabs.hidden = true;
    var chartTab = el('button', 'hp-tab', 'Chart');
    var reportTab = el('button', 'hp-tab', 'Verdict');
    chartTab.type = reportTab.type = 'button';
    chartTab.setAttribute('data-tab', 'chart');
    reportTab.setAttribute('data-tab', 'report');
    tabs.appendChild(chartTab);
    tabs.appendChild(reportTab);
    chartTab.addEventListener('click', function () { showTab('chart'); });
    reportTab.addEventListener('click', function () { showTab('report'); });
    widget.appendChild(controls);
    widget.appendChild(status);
    widget.appendChild(error);
    widget.appendChild(tabs);
    widget.appendChild(chart);
    widget.appendChild(report);
    root.appendChild(widget);
    setState('idle');

    var info = null; // GET /api/exercises/<id>
    var source = null; // the EventSource of the run followed
    var run = null; // { id, series: {label: {...}}, order: [...], warmup, measured }

    function setState(state) {
      root.setAttribute('data-state', state);
      var running = state === 'running' || state === 'starting';
      Array.prototype.forEach.call(controls.querySelectorAll('.hp-run'), function (b) { b.disabled = running || !info; });
      cancel.hidden = state !== 'running';
    }

    function showError(text) {
      error.textContent = text;
      error.hidden = !text;
    }

    function showTab(which) {
      chart.hidden = which !== 'chart';
      report.hidden = which !== 'report';
      chartTab.setAttribute('aria-pressed', String(which === 'chart'));
      reportTab.setAttribute('aria-pressed', String(which === 'report'));
      redraw();
      refit();
    }

    function refit() {
      if (demoMode && window.HotPathDeck && typeof window.HotPathDeck.refit === 'function') window.HotPathDeck.refit();
    }

    function addButton(text, servers, title) {
      var b = el('button', 'hp-run', text);
      b.type = 'button';
      b.setAttribute('data-servers', servers);
      if (title) b.title = title;
      b.addEventListener('click', function () { start(servers); });
      controls.appendChild(b);
    }

    function serversFor(key) {
      if (key === 'all') return info.demo;
      // Your file is judged against the references its goal names, measured in the same run (as verify does).
      if (key === 'mine') return info.verify;
      return [/^\d+$/.test(key) ? Number(key) : key];
    }

    function start(key) {
      if (!info) return;
      showError('');
      setState('starting');
      status.textContent = 'Starting…';
      postJson('/api/runs', { exercise: exerciseId, servers: serversFor(key) }).then(function (res) {
        if (res.status !== 202) {
          setState('idle');
          status.textContent = '';
          showError(res.json.error || 'the hub refused the run (' + res.status + ')');
          return;
        }
        follow(res.json.id);
        if (runsChannel) runsChannel.postMessage({ run: res.json.id, exercise: info.id });
      }, function () {
        setState('idle');
        showError('the hub did not answer: is it still running?');
      });
    }

    function follow(id) {
      if (source) source.close();
      run = { id: id, series: {}, order: [], warmup: 0, measured: 0, current: '' };
      root.setAttribute('data-run-id', id);
      report.innerHTML = '';
      report.hidden = false;
      legend.innerHTML = '';
      chart.hidden = false;
      tabs.hidden = true;
      widget.classList.remove('hp-has-report');
      setState('running');
      source = new EventSource('/api/runs/' + id + '/events');
      var on = function (name, handler) {
        source.addEventListener(name, function (event) {
          var data;
          try { data = JSON.parse(event.data); } catch (e) { return; }
          handler(data);
        });
      };
      on('run', onRun);
      on('services', function (d) { status.textContent = 'Starting services: ' + d.names.join(', '); });
      on('starting', function (d) {
        run.current = d.label;
        status.textContent = '[' + (d.index + 1) + '/' + d.of + '] ' + d.label + ': starting';
        markLegend(d.label, 'running');
      });
      on('checked', function (d) { status.textContent = d.label + ': correctness probe ' + (d.ok ? 'passed' : 'FAILED'); });
      on('load', onLoad);
      on('after-load', function (d) { status.textContent = d.label + ': checking what the load left behind'; });
      on('done', function (d) {
        var r = d.run;
        var line = r.failure ? 'failed: ' + r.failure.split('\n')[0] : r.load ? number.format(r.load.requestsPerSecond.mean) + ' req/s, p99 ' + number.format(r.load.latency.p99) + ' ms' : 'not measured';
        status.textContent = r.label + ': ' + line;
        markLegend(r.label, r.failure || (r.check && !r.check.ok) ? 'failed' : 'done', line);
      });
      on('cancelling', function (d) { status.textContent = 'Cancelling: ' + d.reason + '…'; });
      on('report', function (d) {
        finish('done');
        report.innerHTML = d.html;
        widget.classList.add('hp-has-report');
        root.setAttribute('data-pass', String(d.report.pass));
        status.textContent = 'Finished: ' + d.overall + '.' + (d.recordedPass ? ' Your server.ts passed: recorded in your progress.' : '');
        var exerciseStatus = document.getElementById('exercise-status');
        if (d.recordedPass && exerciseStatus) {
          exerciseStatus.textContent = 'passed';
          exerciseStatus.className = 'hp-status hp-status-passed';
        }
        if (demoMode) {
          tabs.hidden = false;
          showTab('report');
        } else {
          redraw();
        }
      });
      on('failed', function (d) {
        finish('failed');
        showError('The run failed: ' + d.message);
      });
      on('cancelled', function (d) {
        finish('cancelled');
        status.textContent = 'Cancelled (' + d.reason + '). Every server it started was stopped.';
      });
      source.addEventListener('error', function () {
        if (root.getAttribute('data-state') !== 'running') return;
        // CLOSED: the hub answered, but no longer knows the run (it was restarted); else it retries.
        if (source && source.readyState === EventSource.CLOSED) {
          finish('failed');
          showError('Lost this run: the hub was stopped or restarted. Start it again.');
        } else {
          status.textContent = 'Lost the connection to the hub; trying again…';
        }
      });
    }

    function finish(state) {
      if (source) source.close();
      source = null;
      setState(state);
    }

    function onRun(d) {
      run.warmup = d.load.warmupSeconds;
      run.measured = d.load.durationSeconds;
      d.servers.forEach(function (s) {
        run.order.push(s.label);
        run.series[s.label] = { label: s.label, rps: [], latency: [], state: 'waiting' };
        var item = el('li', 'hp-legend-item');
        item.setAttribute('data-label', s.label);
        item.setAttribute('data-state', 'waiting');
        var swatch = el('span', 'hp-swatch');
        swatch.style.background = colorOf(s.label);
        item.appendChild(swatch);
        item.appendChild(el('span', 'hp-legend-label', s.label));
        item.appendChild(el('span', 'hp-legend-value', ''));
        item.title = s.title;
        legend.appendChild(item);
      });
      status.textContent = 'Run of ' + d.exercise.id + ': ' + run.order.join(', ');
      redraw();
      refit();
    }

    function markLegend(label, state, text) {
      var item = legend.querySelector('[data-label="' + (window.CSS && CSS.escape ? CSS.escape(label) : label) + '"]');
      if (!item) return;
      item.setAttribute('data-state', state);
      if (text !== undefined) item.querySelector('.hp-legend-value').textContent = text;
    }

    function onLoad(d) {
      var series = run.series[d.label];
      if (!series) return;
      var p = d.progress;
      var latency = p.latencyLastSecond ? ' · p99 ' + ms(p.latencyLastSecond.p99) : '';
      status.textContent = d.label + ': ' + p.phase + ' ' + p.second + '/' + p.of + ' s' + (p.detail ? ' · ' + p.detail : '') + ' · ' + number.format(p.requestsLastSecond) + ' req/s' + latency;
      // In turns with a fresh copy of itself (throughputKept): said in the status line, not drawn as its seconds.
      if (p.phase === 'beside a fresh copy') return;
      // Seconds of load for this server: the warm-up, then the measured phase after it.
      if (p.phase === 'warm-up') run.warmup = Math.max(run.warmup, p.of);
      else run.measured = Math.max(run.measured, p.of);
      var x = p.phase === 'warm-up' ? p.second : run.warmup + p.second;
      // autocannon ends a phase with one more tick for the same second: not a second of load.
      var previous = series.rps[series.rps.length - 1];
      if (previous && previous.x >= x) return;
      series.rps.push({ x: x, y: p.requestsLastSecond });
      if (p.latencyLastSecond) series.latency.push({ x: x, y: p.latencyLastSecond.p99, y2: p.latencyLastSecond.p50 });
      markLegend(d.label, 'running', number.format(p.requestsLastSecond) + ' req/s' + latency);
      redraw();
    }

    function redraw() {
      if (!run || chart.hidden) return;
      var list = run.order.map(function (label) { return run.series[label]; });
      var xMax = run.warmup + run.measured;
      drawPanel(rpsBox, {
        className: 'hp-chart hp-chart-rps',
        title: 'req/s, second by second (log scale)',
        xTitle: 'seconds of load',
        series: list.map(function (s) { return { label: s.label, points: s.rps }; }),
        xMax: xMax, warmup: run.warmup, floor: 1,
      });
      drawPanel(latencyBox, {
        className: 'hp-chart hp-chart-latency',
        title: 'latency ms: p99 solid, p50 dashed (log scale)',
        xTitle: 'seconds of load',
        series: list.map(function (s) { return { label: s.label, points: s.latency }; }),
        xMax: xMax, warmup: run.warmup, floor: 0.1,
      });
    }

    if (window.ResizeObserver) new ResizeObserver(function () { redraw(); }).observe(panels);

    cancel.addEventListener('click', function () {
      if (!run) return;
      postJson('/api/runs/' + run.id + '/cancel', {}).then(function (res) {
        if (res.status !== 202) showError(res.json.error || 'could not cancel (' + res.status + ')');
      });
    });

    fetch('/api/exercises/' + encodeURIComponent(exerciseId))
      .then(function (res) { return res.json().then(function (json) { return { ok: res.ok, json: json }; }); })
      .then(function (res) {
        if (!res.ok) throw new Error(res.json.error || 'unknown exercise');
        info = res.json;
        if (fallback) fallback.hidden = true;
        if (demoMode) {
          addButton('▶ Run the demo', 'all', 'broken, every stage and the ceiling, one after another under the same load');
        } else {
          info.servers.forEach(function (s) {
            var text = s.server === 'mine' ? 'your server.ts' : typeof s.server === 'number' ? s.label + ': ' + s.title : s.label;
            var title = s.server === 'mine' ? 'verify: ' + info.verify.join(', ') + ', judged as npm run workshop -- verify does; a pass is recorded' : s.title;
            addButton(text, String(s.server), title);
          });
          addButton('all side by side', 'all', info.demo.join(', ') + ': what `npm run workshop -- demo` runs');
        }
        controls.appendChild(cancel);
        var seconds = info.load.warmupSeconds + info.load.durationSeconds;
        if (!demoMode) status.textContent = 'Each server: ' + info.load.warmupSeconds + ' s warm-up + ' + info.load.durationSeconds + ' s measured, ' + info.load.connections + ' connections (' + seconds + ' s and its start-up). One run at a time.';
        setState('idle');
        runListeners.push(function (message) {
          var busy = root.getAttribute('data-state') === 'running' || root.getAttribute('data-state') === 'starting';
          if (message && message.exercise === info.id && !busy && (!run || run.id !== message.run)) follow(message.run);
        });
        // A run of this exercise already in progress (a reloaded page, or the deck started it): follow it.
        // A doctor run is the doctor panel's (doctor.js).
        return fetch('/api/runs').then(function (r) { return r.json(); }).then(function (json) {
          if (json.active && json.active.exercise.id === info.id && json.active.kind !== 'doctor') follow(json.active.id);
        });
      })
      .catch(function (e) {
        showError('The live runs are not available: ' + e.message);
      });
  }

  function mountAll() {
    Array.prototype.forEach.call(document.querySelectorAll('.hp-live[data-exercise], .hp-demo[data-exercise]'), mount);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
  else mountAll();
  window.HotPathLive = { mountAll: mountAll };
})();
