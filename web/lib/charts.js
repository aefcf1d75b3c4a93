// Line charts on Debian's Chart.js (window.Chart, loaded by index.html), drawn the one way every
// chart of the UI is: no animation, filling its box, points given as {x, y} (no parsing), the
// legend below.
export function lineChart(canvas, datasets, { scales, plugins = {}, ...options } = {}) {
  return new window.Chart(canvas, {
    type: 'line',
    data: { datasets },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      normalized: true,
      scales,
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } }, ...plugins },
      ...options,
    },
  });
}
