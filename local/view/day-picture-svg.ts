// The picture of a compressed day: on one axis of simulated hours, the nodes of each NodePool, the
// hourly price of the VMs against the lower bound of the pods' requests, and the pending pods; each
// disruption is marked by its reason and each weather entry is a shaded band, numbered in the legend.
// Pure: data in, SVG text out.

export interface DayPictureSample {
  hour: number;
  nodesByPool: Record<string, number>;
  pricePerHour: number;
  lowerBoundPerHour: number;
  pending: number;
}

export interface DayPicture {
  title: string;
  subtitle: string;
  /** The axis runs from 0 to this many simulated hours. */
  hours: number;
  pools: readonly string[];
  samples: readonly DayPictureSample[];
  disruptions: readonly { hour: number; reason: string; label: string }[];
  weather: readonly { fromHour: number; toHour: number; label: string }[];
}

const width = 1150;
const left = 70;
const right = 30;
const panelHeight = 170;
const gap = 46;
const top = 70;
const poolColours = ['#2e86ab', '#f18f01', '#5fad56', '#b370b0', '#c73e1d'];
const reasonColours: Record<string, string> = {
  Drifted: '#7b2cbf',
  Empty: '#2a9d8f',
  Underutilized: '#e76f51',
  Expired: '#6c757d',
};

export function renderDayPictureSvg(picture: DayPicture): string {
  const plotWidth = width - left - right;
  const x = (hour: number) => left + (Math.min(Math.max(hour, 0), picture.hours) / picture.hours) * plotWidth;
  const panels = [
    { title: 'nodes per NodePool', top: top },
    {
      title: '$/h of the VMs (solid) against the lower bound of the requests (dashed)',
      top: top + panelHeight + gap,
    },
    { title: 'pending pods', top: top + 2 * (panelHeight + gap) },
  ];
  const legendTop = top + 3 * (panelHeight + gap);
  const legendLines = Math.ceil(picture.weather.length / 2) + 2;
  const height = legendTop + legendLines * 18 + 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escape(picture.title)}</text>`,
    `<text x="${left}" y="44" fill="#444">${escape(picture.subtitle)}</text>`,
  ];

  const series = (values: readonly number[]) => {
    const highest = Math.max(1, ...values);
    return { highest: niceCeiling(highest) };
  };
  const polyline = (
    panelTop: number,
    highest: number,
    values: readonly number[],
    colour: string,
    dashed = false,
  ): string => {
    const points = picture.samples
      .map(
        (s, i) =>
          `${x(s.hour).toFixed(1)},${(panelTop + panelHeight - ((values[i] ?? 0) / highest) * panelHeight).toFixed(1)}`,
      )
      .join(' ');
    return `<polyline points="${points}" fill="none" stroke="${colour}" stroke-width="1.6"${dashed ? ' stroke-dasharray="5 3"' : ''}/>`;
  };

  const nodeValues = picture.pools.map((pool) => picture.samples.map((s) => s.nodesByPool[pool] ?? 0));
  const priceValues = picture.samples.map((s) => s.pricePerHour);
  const boundValues = picture.samples.map((s) => s.lowerBoundPerHour);
  const pendingValues = picture.samples.map((s) => s.pending);
  const scales = [
    series(nodeValues.flat()).highest,
    series([...priceValues, ...boundValues]).highest,
    series(pendingValues).highest,
  ];

  panels.forEach((panel, index) => {
    const highest = scales[index] as number;
    for (const band of picture.weather) {
      const bandWidth = Math.max(2, x(band.toHour) - x(band.fromHour));
      parts.push(
        `<rect x="${x(band.fromHour).toFixed(1)}" y="${panel.top}" width="${bandWidth.toFixed(1)}" height="${panelHeight}" fill="#f4a261" fill-opacity="0.15"><title>${escape(band.label)}</title></rect>`,
      );
    }
    parts.push(
      `<text x="${left}" y="${panel.top - 8}" font-weight="bold">${escape(panel.title)}</text>`,
      `<rect x="${left}" y="${panel.top}" width="${plotWidth}" height="${panelHeight}" fill="none" stroke="#999"/>`,
    );
    for (let tick = 0; tick <= 4; tick++) {
      const value = (highest * tick) / 4;
      const y = panel.top + panelHeight - (tick / 4) * panelHeight;
      parts.push(
        `<line x1="${left}" y1="${y.toFixed(1)}" x2="${left + plotWidth}" y2="${y.toFixed(1)}" stroke="#eee"/>`,
        `<text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#555">${formatValue(value, index === 1)}</text>`,
      );
    }
    for (let hour = 0; hour <= picture.hours; hour += 2) {
      parts.push(
        `<text x="${x(hour).toFixed(1)}" y="${panel.top + panelHeight + 14}" text-anchor="middle" fill="#555">${String(hour).padStart(2, '0')}:00</text>`,
      );
    }
  });

  const [nodesPanel, pricePanel, pendingPanel] = panels as [
    (typeof panels)[0],
    (typeof panels)[0],
    (typeof panels)[0],
  ];
  nodeValues.forEach((values, i) =>
    parts.push(
      polyline(nodesPanel.top, scales[0] as number, values, poolColours[i % poolColours.length] as string),
    ),
  );
  parts.push(
    polyline(pricePanel.top, scales[1] as number, priceValues, '#1d3557'),
    polyline(pricePanel.top, scales[1] as number, boundValues, '#1d3557', true),
    polyline(pendingPanel.top, scales[2] as number, pendingValues, '#c73e1d'),
  );
  for (const mark of picture.disruptions) {
    const mx = x(mark.hour);
    const colour = reasonColours[mark.reason] ?? '#333';
    parts.push(
      `<path d="M ${mx.toFixed(1)} ${nodesPanel.top + 8} l 4 -8 h -8 z" fill="${colour}"><title>${escape(mark.label)}</title></path>`,
      `<line x1="${mx.toFixed(1)}" y1="${nodesPanel.top + 8}" x2="${mx.toFixed(1)}" y2="${nodesPanel.top + 22}" stroke="${colour}" stroke-width="1.5"/>`,
    );
  }

  let lx = left;
  const legend = (colour: string, label: string, y: number) => {
    parts.push(
      `<rect x="${lx}" y="${y - 10}" width="12" height="12" fill="${colour}"/>`,
      `<text x="${lx + 16}" y="${y}">${escape(label)}</text>`,
    );
    lx += 30 + label.length * 6.5;
  };
  picture.pools.forEach((pool, i) =>
    legend(poolColours[i % poolColours.length] as string, `NodePool ${pool}`, legendTop),
  );
  const reasons = [...new Set(picture.disruptions.map((d) => d.reason))];
  for (const reason of reasons) legend(reasonColours[reason] ?? '#333', `disruption: ${reason}`, legendTop);
  picture.weather.forEach((band, i) => {
    const column = i % 2;
    const row = Math.floor(i / 2);
    parts.push(
      `<text x="${left + column * 540}" y="${legendTop + 22 + row * 18}" fill="#8a4b08">${escape(`▮ ${formatHour(band.fromHour)} ${band.label}`)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function niceCeiling(value: number): number {
  const magnitude = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 2.5, 5, 10]) if (value <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

function formatValue(value: number, money: boolean): string {
  if (money) return `$${value.toFixed(value < 10 ? 2 : 1)}`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function formatHour(hour: number): string {
  const minutes = Math.round(hour * 60);
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
