// Small SVG charts a manager reads at a glance: columns per day (stacked series) and horizontal
// bars. Drawn with the DOM (text is text), each with a title and a table-like description for
// screen readers, in colours that keep their contrast on white.
import { h, s } from './dom.js';

export const COLORS = ['#1f5fbf', '#c2410c', '#6d28d9', '#047857', '#b91c1c', '#0e7490'];

/** Columns per x value, the `series` [{ key, label }] side by side (a series may be part of
 * another, as escalations are of requests, so they are never stacked). */
export function columns({ title, rows, x, series, height = 220 }) {
  const width = 520;
  const max = Math.max(1, ...rows.flatMap((r) => series.map((se) => r[se.key] ?? 0)));
  const plot = height - 36;
  const step = (width - 48) / Math.max(1, rows.length);
  const group = Math.min(step - 6, 14 * series.length + 16);
  const bar = Math.max(2, group / series.length);
  const svg = s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart', 'aria-label': title, preserveAspectRatio: 'xMinYMin meet' },
    s('title', {}, title),
    s('line', { x1: 40, x2: width, y1: plot + 4, y2: plot + 4, class: 'axis' }),
    s('text', { x: 36, y: 14, 'text-anchor': 'end', class: 'tick' }, String(max)),
    s('text', { x: 36, y: plot + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    rows.map((r, i) => {
      const left = 44 + i * step + (step - group) / 2;
      const parts = series.map((se, j) => {
        const v = r[se.key] ?? 0;
        const hgt = (v / max) * (plot - 8);
        return v > 0
          ? s(
              'rect',
              { x: left + j * bar, y: plot + 4 - hgt, width: Math.max(1, bar - 1), height: hgt, fill: COLORS[j % COLORS.length] },
              s('title', {}, `${r[x]}: ${v} ${se.label}`),
            )
          : null;
      });
      const showLabel = rows.length <= 14 || i % Math.ceil(rows.length / 10) === 0;
      return [parts, showLabel ? s('text', { x: left + group / 2, y: height - 6, 'text-anchor': 'middle', class: 'tick' }, String(r[x]).slice(5)) : null];
    }),
  );
  return figure(title, svg, series);
}

/** Horizontal bars: rows [{ label, values: { key: n } }] with `series` [{ key, label }] side by side. */
export function bars({ title, rows, series, unit = '' }) {
  const max = Math.max(1, ...rows.flatMap((r) => series.map((se) => r.values[se.key] ?? 0)));
  const line = 20 * series.length + 12;
  const width = 520;
  const labelW = 200;
  const height = Math.max(30, rows.length * line + 8);
  const svg = s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart', 'aria-label': title },
    s('title', {}, title),
    rows.map((r, i) => [
      s('text', { x: labelW - 8, y: i * line + 19, 'text-anchor': 'end', class: 'label' }, truncate(r.label, 24)),
      series.map((se, j) => {
        const v = r.values[se.key];
        const w = v === null || v === undefined ? 0 : (v / max) * (width - labelW - 70);
        const y = i * line + 6 + j * 20;
        return [
          s('rect', { x: labelW, y, width: Math.max(w, v ? 2 : 0), height: 17, fill: COLORS[j % COLORS.length] }),
          s('text', { x: labelW + w + 6, y: y + 14, class: 'value' }, v === null || v === undefined ? '—' : `${formatValue(v)}${unit}`),
        ];
      }),
    ]),
  );
  return figure(title, svg, series.length > 1 ? series : []);
}

function formatValue(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function truncate(text, n) {
  const t = String(text ?? '');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function figure(title, svg, legend) {
  return h(
    'figure',
    { class: 'chart-card card' },
    h('figcaption', {}, title),
    svg,
    legend.length > 0
      ? h(
          'ul',
          { class: 'legend' },
          legend.map((se, j) => h('li', {}, h('span', { class: 'swatch', style: null, dataset: { color: j } }), se.label)),
        )
      : null,
  );
}
