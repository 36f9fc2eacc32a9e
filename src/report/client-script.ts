/**
 * The page's only script (plain browser JavaScript, run after the inlined uPlot): it draws each chart
 * of the embedded view model with uPlot. All text reaches the page through uPlot's textContent or
 * the canvas, never as HTML. It records what it drew in window.__reportCharts (the browser test reads it).
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
  var MARKER = { resume: '#2ca02c', failure: '#d62728', pause: '#ff7f0e' };
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var drawn = [];
  window.__reportCharts = drawn;

  function markersPlugin(markers) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.font = Math.round(11 * devicePixelRatio) + 'px sans-serif';
          markers.forEach(function (m, i) {
            var x = Math.round(u.valToPos(m.x, 'x', true));
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
            ctx.strokeStyle = MARKER[m.kind];
            ctx.fillStyle = MARKER[m.kind];
            ctx.lineWidth = 2 * devicePixelRatio;
            ctx.setLineDash(m.kind === 'resume' ? [6 * devicePixelRatio, 4 * devicePixelRatio] : []);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.fillText(m.label, x + 4 * devicePixelRatio, u.bbox.top + (14 + 14 * (i % 4)) * devicePixelRatio);
          });
          ctx.restore();
        }],
      },
    };
  }

  function makeChart(c, el) {
    var width = Math.max(320, Math.min(el.clientWidth || 900, 1100));
    var cats = c.xCategories;
    var series = [{ label: c.xLabel, value: cats ? function (u, v) { return v == null ? '' : cats[v]; } : undefined }];
    c.series.forEach(function (s, i) {
      var color = PALETTE[i % PALETTE.length];
      var one = { label: s.label, stroke: s.faint ? color + '66' : color, width: s.faint ? 1 : 2, spanGaps: false };
      if (c.kind === 'points') {
        one.paths = function () { return null; };
        one.points = { show: true, size: 9, stroke: color, fill: color };
      } else if (c.kind === 'bars') {
        one.paths = uPlot.paths.bars({ size: [0.7, 60] });
        one.fill = color + 'aa';
        one.points = { show: false };
      } else {
        one.points = { show: c.x.length <= 2 };
      }
      series.push(one);
    });
    var xAxis = { label: c.xLabel };
    if (c.kind === 'bars') xAxis.values = function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) ? String(v) : ''; }); };
    if (cats) {
      xAxis.values = function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) && cats[v] !== undefined ? cats[v] : ''; }); };
      xAxis.splits = function () { return cats.map(function (_, i) { return i; }); };
    }
    var opts = {
      title: c.title,
      width: width,
      height: 300,
      series: series,
      axes: [xAxis, { label: c.yLabel }],
      scales: { y: c.kind === 'bars' ? { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.05 : 1]; } } : {}, x: { time: false, range: function (u, min, max) { return min === max ? [min - 1, max + 1] : (c.kind === 'line' ? [min, max] : [min - (max - min) * 0.05, max + (max - min) * 0.05]); } } },
      plugins: c.markers && c.markers.length ? [markersPlugin(c.markers)] : [],
    };
    // uPlot passes over undefined and breaks the line at null: null in the model means "no point here".
    var ys = c.series.map(function (s) {
      var v = s.values.map(function (y) { return y === null ? undefined : y; });
      (s.gaps || []).forEach(function (g) {
        c.x.forEach(function (x, i) { if (x > g[0] && x < g[1]) v[i] = null; });
      });
      return v;
    });
    var u = new uPlot(opts, [c.x].concat(ys), el);
    var points = c.series.reduce(function (n, s) { return n + s.values.filter(function (v) { return v !== null; }).length; }, 0);
    drawn.push({ id: c.id, series: c.series.length, points: points, colors: series.slice(1).map(function (s) { return PALETTE[(series.indexOf(s) - 1) % PALETTE.length]; }) });
    return u;
  }

  data.sections.forEach(function (section) {
    section.charts.forEach(function (c) {
      var el = document.getElementById('chart-' + c.id);
      if (!el) throw new Error('no element for chart ' + c.id);
      makeChart(c, el);
    });
  });
})();
`;
