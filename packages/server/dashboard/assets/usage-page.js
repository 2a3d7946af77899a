// @ts-check
/**
 * #/usage: video seconds and cost per day and per model over a range (bar charts drawn as inline SVG, each with
 * a table of the same figures), a CSV download of those rows, and the account's monthly limits.
 */
import { api } from './api.js';
import { announce, h, select } from './dom.js';
import { describeLimits, limitFields } from './limit-fields.js';
import { cell, dataTable, errorBox, exclusive, pageHeading } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';
const DAY = 86_400;

/** @type {[value: string, label: string][]} */
const RANGES = [
  ['this-month', 'This month'],
  ['last-month', 'Last month'],
  ['7-days', 'Last 7 days'],
  ['30-days', 'Last 30 days'],
];

/**
 * [start, end) in Unix seconds for a range of RANGES; months are UTC calendar months, as the API's.
 * @param {string} name
 * @returns {[start: number, end: number]}
 */
function rangeOf(name, now = new Date()) {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  /** @param {number} ms */
  const seconds = (ms) => Math.floor(ms / 1000);
  const tomorrow = seconds(Date.UTC(year, month, now.getUTCDate() + 1));
  if (name === 'last-month')
    return [seconds(Date.UTC(year, month - 1, 1)), seconds(Date.UTC(year, month, 1))];
  if (name === '7-days') return [tomorrow - 7 * DAY, tomorrow];
  if (name === '30-days') return [tomorrow - 30 * DAY, tomorrow];
  return [seconds(Date.UTC(year, month, 1)), seconds(Date.UTC(year, month + 1, 1))];
}

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...(Node | string)} children
 */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/** Rounds away float noise in sums of amounts (0.1 + 0.2). */
/** @param {number} value */
const amount = (value) => Math.round(value * 1e6) / 1e6;

/**
 * A bar chart of `bars` ([{ label, value }]): an SVG image whose name says every figure, so the chart alone is
 * readable by a screen reader; the table after it gives the same figures for everyone. Each bar has its label
 * above it and its figure after it. The bars' lengths are shares of the width and the text is not scaled, so the
 * chart stays legible from a phone to a wide screen.
 * @param {{ title: string, unit: string, bars: { label: string, value: number }[] }} chart
 */
function barChart({ title, unit, bars }) {
  const rowHeight = 46;
  const barHeight = 18;
  /** The longest bar, in percent of the width: the rest is room for its figure. */
  const longest = 80;
  const max = Math.max(...bars.map((bar) => bar.value), 0) || 1;
  const summary = bars.map((bar) => `${bar.label}: ${bar.value} ${unit}`).join('; ');
  const image = svg('svg', {
    class: 'usage-chart',
    width: '100%',
    height: Math.max(1, bars.length) * rowHeight,
    role: 'img',
    'aria-label': `${title}. ${summary || 'No usage.'}`,
  });
  bars.forEach((bar, i) => {
    const y = i * rowHeight;
    // A figure above zero always shows a sliver of a bar.
    const share = bar.value > 0 ? Math.max(0.5, (longest * bar.value) / max) : 0;
    image.append(
      svg('text', { x: 0, y: y + 15, class: 'usage-chart-label' }, bar.label),
      svg('rect', {
        x: 0,
        y: y + 21,
        width: `${share}%`,
        height: barHeight,
        rx: 3,
        class: 'usage-chart-bar',
      }),
      svg(
        'text',
        { x: `${share}%`, dx: share > 0 ? 6 : 0, y: y + 35, class: 'usage-chart-value' },
        `${bar.value}`,
      ),
    );
  });
  return h('figure', { class: 'usage-figure' }, h('figcaption', {}, title), image);
}

/**
 * @param {string} caption
 * @param {string} keyLabel
 * @param {UsageReport} report
 */
function usageTable(caption, keyLabel, report) {
  const costed = report.currency !== undefined;
  const columns = [keyLabel, 'Tasks', 'Video seconds', ...(costed ? [`Cost (${report.currency})`] : [])];
  const rows = report.data.map((bucket) =>
    h(
      'tr',
      {},
      cell(keyLabel, bucket.key ?? 'dashboard'),
      cell('Tasks', String(bucket.tasks)),
      cell('Video seconds', String(bucket.video_seconds)),
      costed ? cell(columns[3] ?? '', String(amount(bucket.cost ?? 0))) : null,
    ),
  );
  return dataTable({ caption, columns, rows, className: 'usage-table' });
}

/**
 * The rows of both groupings as CSV: `group,key,tasks,video_seconds,cost,currency`.
 * @param {UsageReport} byDay
 * @param {UsageReport} byModel
 */
export function usageCsv(byDay, byModel) {
  /** @param {string} value */
  const quote = (value) => (/[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = ['group,key,tasks,video_seconds,cost,currency'];
  /** @type {[group: string, report: UsageReport][]} */
  const groups = [
    ['day', byDay],
    ['model', byModel],
  ];
  for (const [group, report] of groups) {
    for (const bucket of report.data) {
      const cost = bucket.cost === undefined ? '' : String(amount(bucket.cost));
      lines.push(
        [group, bucket.key ?? 'dashboard', bucket.tasks, bucket.video_seconds, cost, report.currency ?? '']
          .map((value) => quote(String(value)))
          .join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * @param {string} filename
 * @param {string} text
 */
function download(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * One grouping (per day, per model) under its heading: a chart of video seconds and one of cost (side by side on a
 * wide screen), and a table.
 * @param {{ id: string, heading: string, noun: string, keyLabel: string, report: UsageReport }} section
 */
function usageSection({ id, heading, noun, keyLabel, report }) {
  const { currency } = report;
  /** @param {'seconds' | 'cost'} measure */
  const bars = (measure) =>
    report.data.map((bucket) => ({
      label: bucket.key ?? 'dashboard',
      value: measure === 'cost' ? amount(bucket.cost ?? 0) : bucket.video_seconds,
    }));
  return h(
    'section',
    { class: 'usage-section', 'aria-labelledby': id },
    h('h2', { id }, heading),
    h(
      'div',
      { class: 'usage-charts' },
      barChart({ title: `Video seconds per ${noun}`, unit: 's', bars: bars('seconds') }),
      currency
        ? barChart({ title: `Cost per ${noun} (${currency})`, unit: currency, bars: bars('cost') })
        : null,
    ),
    usageTable(`Usage per ${noun}`, keyLabel, report),
  );
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderUsage(main, { signal }) {
  const errors = errorBox();
  const range = select({ name: 'range', id: 'usage-range' }, RANGES, 'this-month');
  const csvButton = h(
    'button',
    { type: 'button', class: 'button secondary', disabled: true },
    'Download CSV',
  );
  const totalsSlot = h('p', { class: 'usage-totals' });
  const chartsSlot = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading usage…'));
  const limitsSlot = h('div', { 'aria-busy': 'true' });
  /** The answers shown, with the range they are for: what the CSV holds. */
  /** @type {{ byDay: UsageReport, byModel: UsageReport, rangeName: string, start: number } | null} */
  let current = null;
  /** The number of the latest load: an earlier one that answers later must not replace what it shows. */
  let loads = 0;

  async function load() {
    const ticket = ++loads;
    const rangeName = range.value;
    const [start, end] = rangeOf(rangeName);
    /** @param {string} groupBy */
    const query = (groupBy) => `/v1/usage?group_by=${groupBy}&start=${start}&end=${end}`;
    errors.clear();
    csvButton.disabled = true;
    chartsSlot.setAttribute('aria-busy', 'true');
    try {
      /** @type {[UsageReport, UsageReport]} */
      const [byDay, byModel] = await Promise.all([
        api(query('day'), { signal }),
        api(query('model'), { signal }),
      ]);
      if (ticket !== loads) return;
      current = { byDay, byModel, rangeName, start };
      showUsage(byDay, byModel);
      csvButton.disabled = false;
    } catch (error) {
      if (ticket !== loads || signal.aborted) return;
      // Not the figures of another range under this range's name.
      current = null;
      totalsSlot.replaceChildren();
      chartsSlot.replaceChildren();
      errors.show(error);
    } finally {
      if (ticket === loads) chartsSlot.removeAttribute('aria-busy');
    }
  }

  /**
   * @param {UsageReport} byDay
   * @param {UsageReport} byModel
   */
  function showUsage(byDay, byModel) {
    const { totals, currency } = byDay;
    totalsSlot.replaceChildren(
      `${totals.tasks} completed tasks, ${totals.video_seconds} video seconds`,
      currency ? `, ${amount(totals.cost ?? 0)} ${currency}` : '',
      totals.reserved.tasks > 0
        ? ` (and ${totals.reserved.tasks} running, ${totals.reserved.video_seconds} s reserved)`
        : '',
      '. Failed and cancelled tasks cost nothing.',
    );
    if (byDay.data.length === 0) {
      chartsSlot.replaceChildren(h('p', { class: 'empty' }, 'No tasks were created in this range.'));
      return;
    }
    chartsSlot.replaceChildren(
      usageSection({ id: 'usage-day', heading: 'Per day', noun: 'day', keyLabel: 'Day', report: byDay }),
      usageSection({
        id: 'usage-model',
        heading: 'Per model',
        noun: 'model',
        keyLabel: 'Model',
        report: byModel,
      }),
    );
  }

  /** The account's limits and this month's use, and the form that sets them; built once, updated in place. */
  /** @param {AccountLimits} first */
  function limitsForm(first) {
    const inputs = limitFields(first.limits, first.currency);
    const formErrors = errorBox();
    const summary = h('p');
    /** @param {AccountLimits} answer */
    const describe = (answer) => {
      const { used, reserved } = answer.this_month;
      const resets = new Date(answer.resets_at * 1000);
      summary.replaceChildren(
        `Now: ${describeLimits(answer.limits, answer.currency)}. This month, in every environment: `,
        `${used.video_seconds} video seconds used and ${reserved.video_seconds} reserved`,
        answer.currency ? `, ${amount(used.cost ?? 0)} ${answer.currency} spent` : '',
        '. Limits reset ',
        h('time', { datetime: resets.toISOString() }, resets.toISOString().slice(0, 10)),
        ' (UTC).',
      );
    };
    describe(first);
    const form = h(
      'form',
      { class: 'card inline-form usage-limits', 'aria-labelledby': 'limits-heading' },
      h('h2', { id: 'limits-heading' }, 'Account limits'),
      summary,
      formErrors,
      h('div', { class: 'form-row' }, inputs.fields),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'Save limits')),
    );
    form.addEventListener(
      'submit',
      exclusive(async (event) => {
        event.preventDefault();
        formErrors.clear();
        try {
          /** @type {AccountLimits} */
          const answer = await api('/dashboard/api/limits', { method: 'POST', json: inputs.read() });
          // In place: the focus stays on the button, and the fields show the limits as saved.
          describe(answer);
          inputs.fill(answer.limits);
          announce('Account limits saved.');
        } catch (error) {
          formErrors.show(error);
        }
      }),
    );
    return form;
  }

  async function loadLimits() {
    try {
      /** @type {AccountLimits} */
      const limits = await api('/dashboard/api/limits', { signal });
      limitsSlot.replaceChildren(limitsForm(limits));
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    } finally {
      limitsSlot.removeAttribute('aria-busy');
    }
  }

  range.addEventListener('change', load);
  csvButton.addEventListener('click', () => {
    if (!current) return;
    const day = new Date(current.start * 1000).toISOString().slice(0, 10);
    download(`videogen-usage-${current.rangeName}-${day}.csv`, usageCsv(current.byDay, current.byModel));
  });

  main.replaceChildren(
    ...pageHeading(
      'Usage',
      'Video seconds and cost of the completed tasks of this environment, by the day (UTC) they were created and by model.',
    ),
    errors,
    h('div', { class: 'usage-controls' }, h('label', { for: 'usage-range' }, 'Range'), range, csvButton),
    totalsSlot,
    chartsSlot,
    limitsSlot,
  );
  await Promise.all([load(), loadLimits()]);
}
