/** A self-contained HTML page (inline SVG, no scripts, no fonts fetched) showing clusters in 2-D. */

export interface PlotInput {
  title: string;
  /** Lines shown under the title (settings, counts, silhouette). */
  notes?: string[];
  points: [number, number][];
  labels: ArrayLike<number>;
  /** Shown on hover, one per point. */
  names: string[];
  /** Representative name of each cluster label (default: its first member). */
  representatives?: Map<number, string>;
  /** Clusters listed in the table under the plot (default 40). */
  legendLimit?: number;
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8', '#ffbb78', '#98df8a', '#ff9896', '#c5b0d5', '#c49c94', '#f7b6d2', '#dbdb8d', '#9edae5', '#393b79'];
const SINGLETON = '#c8c8c8';
const WIDTH = 960;
const HEIGHT = 640;
const MARGIN = 24;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderClusterPlot(input: PlotInput): string {
  const n = input.points.length;
  if (input.names.length !== n || input.labels.length !== n) throw new Error('renderClusterPlot: one name and one label per point');
  const members = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const list = members.get(input.labels[i]);
    if (list) list.push(i);
    else members.set(input.labels[i], [i]);
  }
  // Largest clusters get the distinct palette colours; the rest spread over hues; singletons are grey.
  const bySize = [...members.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
  const colour = new Map<number, string>();
  bySize.forEach(([label, list], rank) => {
    colour.set(label, list.length === 1 ? SINGLETON : rank < PALETTE.length ? PALETTE[rank] : `hsl(${Math.round((rank * 137.508) % 360)},60%,50%)`);
  });
  const representative = (label: number) => input.representatives?.get(label) ?? input.names[members.get(label)![0]];

  let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const [x, y] of input.points) [minX, maxX, minY, maxY] = [Math.min(minX, x), Math.max(maxX, x), Math.min(minY, y), Math.max(maxY, y)];
  const scale = Math.min((WIDTH - 2 * MARGIN) / (maxX - minX || 1), (HEIGHT - 2 * MARGIN) / (maxY - minY || 1));
  const offsetX = (WIDTH - scale * (maxX - minX)) / 2;
  const offsetY = (HEIGHT - scale * (maxY - minY)) / 2;
  const sx = (x: number) => (offsetX + (x - minX) * scale).toFixed(1);
  const sy = (y: number) => (HEIGHT - offsetY - (y - minY) * scale).toFixed(1);

  // Singletons first so that clusters are drawn over them; big clusters last.
  const drawOrder = [...bySize].reverse().flatMap(([, list]) => list);
  const circles = drawOrder.map((i) => {
    const label = input.labels[i];
    const size = members.get(label)!.length;
    const hover = size > 1 ? `${input.names[i]} — cluster ${label} (${size}: ${representative(label)})` : `${input.names[i]} — alone`;
    return `<circle cx="${sx(input.points[i][0])}" cy="${sy(input.points[i][1])}" r="${size > 1 ? 4 : 3}" fill="${colour.get(label)}"><title>${escapeXml(hover)}</title></circle>`;
  });

  const legendRows = bySize
    .filter(([, list]) => list.length > 1)
    .slice(0, input.legendLimit ?? 40)
    .map(([label, list]) => {
      const shown = list.slice(0, 12).map((i) => escapeXml(input.names[i])).join(', ') + (list.length > 12 ? ', …' : '');
      return `<tr><td><span class="swatch" style="background:${colour.get(label)}"></span></td><td>${label}</td><td>${list.length}</td><td>${escapeXml(representative(label))}</td><td>${shown}</td></tr>`;
    });

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeXml(input.title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
svg { border: 1px solid #ddd; background: #fff; max-width: 100%; height: auto; }
circle { stroke: #fff; stroke-width: 0.5; opacity: 0.85; }
circle:hover { stroke: #000; stroke-width: 2; opacity: 1; }
table { border-collapse: collapse; margin-top: 16px; font-size: 13px; }
td, th { border-bottom: 1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 6px; }
.notes { color: #555; font-size: 14px; }
</style>
</head>
<body>
<h1>${escapeXml(input.title)}</h1>
${(input.notes ?? []).map((line) => `<p class="notes">${escapeXml(line)}</p>`).join('\n')}
<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeXml(input.title)}">
${circles.join('\n')}
</svg>
<table>
<thead><tr><th></th><th>cluster</th><th>size</th><th>representative</th><th>members</th></tr></thead>
<tbody>
${legendRows.join('\n')}
</tbody>
</table>
</body>
</html>
`;
}
