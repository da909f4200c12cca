// The exercise page's hints: the button asks the hub for the next one (the same count the CLI's `hint`
// command keeps in the progress file) and shows every hint seen so far.
(function () {
  'use strict';
  function setUp() {
    var section = document.getElementById('hints');
    var button = document.getElementById('hint-next');
    if (!section || !button) return;
    var list = document.getElementById('hints-list');
    var statusLine = document.getElementById('hints-status');
    button.addEventListener('click', function () {
      button.disabled = true;
      fetch('/api/exercises/' + encodeURIComponent(section.getAttribute('data-exercise')) + '/hints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
        .then(function (res) { return res.json().then(function (json) { return { ok: res.ok, json: json }; }); })
        .then(function (res) {
          if (!res.ok) throw new Error(res.json.error || 'the hub refused');
          var data = res.json;
          list.innerHTML = data.hints.map(function (html, i) { return '<li class="hp-hint" data-index="' + (i + 1) + '">' + html + '</li>'; }).join('');
          var newest = list.lastElementChild;
          if (newest) newest.classList.add('hp-hint-new');
          statusLine.textContent = data.statusText;
          button.textContent = data.button;
          button.disabled = data.shown >= data.total;
          section.setAttribute('data-shown', String(data.shown));
          var exerciseStatus = document.getElementById('exercise-status');
          if (exerciseStatus) exerciseStatus.textContent = data.exerciseStatus;
        })
        .catch(function (error) {
          statusLine.textContent = 'Could not fetch the next hint: ' + error.message;
          button.disabled = false;
        });
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
