// The exercise page's doctor panel (pages.ts doctorPanel): "Run the doctor" starts the doctor on the chosen
// server in the hub's run machinery (POST /api/runs, kind "doctor": one run at a time, as the live runs),
// follows it through server-sent events (the load's seconds), and when it ends puts the panel the hub drew
// with the new result in place of this one. It draws no result itself. Plain JS, no build step.
(function () {
  'use strict';
  var number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  var source = null; // the EventSource of the run followed
  var runId = null;

  function part(id) { return document.getElementById(id); }

  function setState(state) {
    var section = part('doctor');
    if (!section) return;
    section.setAttribute('data-state', state);
    var busy = state === 'starting' || state === 'running';
    part('doctor-run').disabled = busy;
    part('doctor-choice').disabled = busy;
    part('doctor-cancel').hidden = state !== 'running';
  }

  function say(text) { part('doctor-status').textContent = text; }

  function showError(text) {
    var error = part('doctor-error');
    error.textContent = text;
    error.hidden = !text;
  }

  // The panel as drawn (the first time, or by the hub with a new result): its controls need this script.
  function setUp() {
    var controls = part('doctor-controls');
    if (!controls) return false;
    controls.hidden = false;
    setState('idle');
    return true;
  }

  function start() {
    var section = part('doctor');
    showError('');
    setState('starting');
    say('Starting…');
    var body = { exercise: section.getAttribute('data-exercise'), kind: 'doctor', server: part('doctor-choice').value };
    fetch('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (res) { return res.json().then(function (json) { return { status: res.status, json: json }; }); })
      .then(function (res) {
        if (res.status !== 202) {
          setState('idle');
          say('');
          showError(res.json.error || 'the hub refused the run (' + res.status + ')');
          return;
        }
        follow(res.json.id);
      }, function () {
        setState('idle');
        say('');
        showError('the hub did not answer: is it still running?');
      });
  }

  function follow(id) {
    if (source) source.close();
    runId = id;
    part('doctor').setAttribute('data-run-id', id);
    setState('running');
    source = new EventSource('/api/runs/' + id + '/events');
    var on = function (name, handler) {
      source.addEventListener(name, function (event) {
        var data;
        try { data = JSON.parse(event.data); } catch (e) { return; }
        handler(data);
      });
    };
    on('run', function (d) { say('The doctor on ' + d.servers.map(function (s) { return s.label; }).join(', ') + ': ' + d.load.connections + ' connections, ' + (d.load.warmupSeconds + d.load.durationSeconds) + ' s of load'); });
    on('starting', function (d) { say('The doctor on ' + d.label + ': starting it, then its correctness probe'); });
    on('load', function (d) {
      var p = d.progress;
      say('The doctor on ' + d.label + ': ' + p.phase + ' ' + p.second + '/' + p.of + ' s · ' + number.format(p.requestsLastSecond) + ' req/s');
    });
    on('cancelling', function (d) { say('Cancelling: ' + d.reason + '…'); });
    on('doctor', function (d) {
      finish();
      var holder = document.createElement('div');
      holder.innerHTML = d.html;
      var fresh = holder.querySelector('#doctor');
      if (fresh) part('doctor').replaceWith(fresh);
      setUp();
      part('doctor').setAttribute('data-state', 'done');
      part('doctor').setAttribute('data-run-id', id);
      say(d.file ? 'Done: the result is kept as ' + d.file + '.' : 'Done.');
      if (d.notWritten) showError('The result could not be written: ' + d.notWritten);
    });
    on('failed', function (d) {
      finish('failed');
      say('');
      showError('The doctor could not run: ' + d.message);
    });
    on('cancelled', function (d) {
      finish('cancelled');
      say('Cancelled (' + d.reason + '). Every server it started was stopped.');
    });
    source.addEventListener('error', function () {
      if (part('doctor').getAttribute('data-state') !== 'running') return;
      // CLOSED: the hub answered, but no longer knows the run (it was restarted); else it retries.
      if (source && source.readyState === EventSource.CLOSED) {
        finish('failed');
        showError('Lost this run: the hub was stopped or restarted. Run the doctor again.');
      } else {
        say('Lost the connection to the hub; trying again…');
      }
    });
  }

  function finish(state) {
    if (source) source.close();
    source = null;
    if (state) setState(state);
  }

  function init() {
    if (!setUp()) return;
    // The panel is drawn again with each result, so its buttons are listened to from the document.
    document.addEventListener('click', function (event) {
      var target = event.target;
      if (!target || !target.id) return;
      if (target.id === 'doctor-run') start();
      if (target.id === 'doctor-cancel' && runId) {
        fetch('/api/runs/' + runId + '/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(function (res) {
          if (res.status !== 202) return res.json().then(function (json) { showError(json.error || 'could not cancel (' + res.status + ')'); });
        });
      }
    });
    // A doctor run of this exercise already in progress (a reloaded page): follow it.
    var exercise = part('doctor').getAttribute('data-exercise');
    fetch('/api/runs')
      .then(function (res) { return res.json(); })
      .then(function (json) {
        if (json.active && json.active.kind === 'doctor' && json.active.exercise.id === exercise && !source) follow(json.active.id);
      })
      .catch(function () {});
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
