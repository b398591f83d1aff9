// The dashboard's only script (the Content-Security-Policy allows no other):
// live updates of the parts of a page marked data-live, and the throughput
// chart (uPlot, served by the dashboard itself). It inserts nothing but what the
// server rendered, escaped, for the same page.
'use strict';
(function () {
  var REFRESH_MS = 5000;
  var live = document.getElementById('live');

  function refresh() {
    if (!live || !live.checked || document.hidden) return;
    // A box ticked for a bulk action is kept: the parts with a ticked box are left alone.
    fetch(location.href, { headers: { 'X-Requested-With': 'refresh' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (!text) return;
        var doc = new DOMParser().parseFromString(text, 'text/html');
        document.querySelectorAll('[data-live]').forEach(function (el) {
          if (el.querySelector('input:checked')) return;
          var fresh = doc.getElementById(el.id);
          if (fresh) el.replaceWith(document.importNode(fresh, true));
        });
        document.body.setAttribute('data-refreshed', String(Date.now()));
      })
      .catch(function () {});
  }
  setInterval(refresh, REFRESH_MS);

  var palette = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2', '#be185d', '#4b5563'];

  function chart(el) {
    fetch(el.getAttribute('data-src'), { credentials: 'same-origin' })
      .then(function (r) { return r.json(); })
      .then(function (points) {
        var queues = [];
        var times = [];
        var byQueue = {};
        points.forEach(function (p) {
          var t = Math.round(new Date(p.sampledAt).getTime() / 60000) * 60;
          if (times.indexOf(t) < 0) times.push(t);
          if (!byQueue[p.queue]) { byQueue[p.queue] = {}; queues.push(p.queue); }
          byQueue[p.queue][t] = p.completed;
        });
        times.sort(function (a, b) { return a - b; });
        el.textContent = '';
        if (times.length === 0) {
          el.textContent = 'No samples yet: the reaper takes one a minute.';
          el.setAttribute('data-rendered', 'empty');
          return;
        }
        var data = [times];
        var series = [{}];
        queues.forEach(function (q, i) {
          data.push(times.map(function (t) { var v = byQueue[q][t]; return v === undefined ? null : v; }));
          series.push({ label: q, stroke: palette[i % palette.length], width: 2 });
        });
        if (typeof uPlot === 'undefined') return;
        var now = Math.round(Date.now() / 1000);
        new uPlot({ width: Math.max(320, el.clientWidth || 800), height: 220, series: series,
                    scales: { x: { time: true, range: [now - 3600, now] } },
                    axes: [{}, { label: 'jobs/min' }] }, data, el);
        el.setAttribute('data-rendered', 'chart');
      })
      .catch(function () { el.textContent = 'The history could not be read.'; });
  }
  var el = document.getElementById('throughput');
  if (el) {
    chart(el);
    setInterval(function () { if (live && live.checked && !document.hidden) chart(el); }, 60000);
  }
})();
