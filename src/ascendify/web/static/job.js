"use strict";
// One job's page: details, curves (uPlot, another job overlaid) and every rank's log tail, all
// from the JSON API; refreshed while the job is active.
const JOB = document.body.dataset.job;
const COMPARE = document.body.dataset.compare;
const API = "../api/jobs/";
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const ORDER = ["loss", "ppl", "acc", "lr", "fps", "samples/s", "tokens/s", "it/s"];
const LOG_KEEP = 200000; // characters of a rank's log kept on the page
const LOG_RANKS = 16; // ranks whose logs are shown
const charts = new Map(); // metric name -> {plot, key, box}
const logOffsets = new Map(); // rank -> offset read up to
let active = true;
let restarts = []; // when each restart of the job began (the second attempt's start on)
const changes = new Map(); // attempt -> the nodes that left or joined before it ("node 1 left")
const CHANGE_COLOUR = "#c9a400"; // a restart that changed the nodes: unlike every line's colour
const jobNames = new Map(); // job id -> its legend name, when another job is overlaid
const PHASES = ["eval", "val", "valid", "validation", "test"]; // a series "<phase>_<name>" is evaluation's

async function nameJobs(jobs) {
  // Each job by its name and the hyperparameters in which it differs from the other(s).
  const details = await Promise.all(jobs.map((job) => getJSON(API + job)));
  const keys = new Set(details.flatMap((job) => Object.keys(job.spec.hyper || {})));
  const differing = [...keys].sort().filter((key) => new Set(details.map((job) => String((job.spec.hyper || {})[key]))).size > 1);
  details.forEach((job, i) => {
    const hyper = differing.map((key) => key + "=" + ((job.spec.hyper || {})[key] ?? "(unset)")).join(" ");
    jobNames.set(jobs[i], job.name + (hyper ? " (" + hyper + ")" : ""));
  });
}

function curves(results) {
  // [metric name, {axis, lines}] a chart: every job's series of that name, an attempt a line in
  // its rank's colour (the API cuts a series by attempt). One x axis a chart: the printed steps
  // where every attempt of every line prints rising ones, else the points' order (counted on
  // across attempts), never both.
  const byName = new Map(); // metric name -> {printed: on the steps?, parts: its lines, owners: series}
  for (const [job, result] of results) {
    for (const series of result.series) {
      const owner = (results.length > 1 ? (jobNames.get(job) || job) + " " : "") + (series.rank < 0 ? "events" : "rank " + series.rank);
      if (!byName.has(series.name)) byName.set(series.name, {printed: true, parts: [], owners: 0});
      const chart = byName.get(series.name);
      chart.printed = chart.printed && series.printed_steps;
      for (const [attempt, from, to] of series.attempts) {
        chart.parts.push({
          label: owner + (attempt > 0 ? " (attempt " + attempt + ")" : ""),
          colour: chart.owners,
          steps: series.steps.slice(from, to),
          order: series.steps.slice(from, to).map((_, i) => from + i),
          y: series.values.slice(from, to),
          count: from === 0 ? series.count : 0, // the points stored, counted once a series
          job,
          attempt,
        });
      }
      chart.owners++;
    }
  }
  const found = [...byName.entries()].map(([name, chart]) => {
    const axis = chart.printed ? "step" : "point";
    return [name, {axis, lines: chart.parts.map((part) => ({...part, x: axis === "step" ? part.steps : part.order}))}];
  });
  return found.sort((a, b) => chartOrder(a[0]) - chartOrder(b[0]) || a[0].localeCompare(b[0]));
}

function chartOrder(name) {
  // Training's series in ORDER, each phase's (valid_loss) after the training series it repeats.
  const cut = name.indexOf("_");
  const phase = cut > 0 ? PHASES.indexOf(name.slice(0, cut)) : -1;
  const base = phase >= 0 ? name.slice(cut + 1) : name;
  return (ORDER.includes(base) ? ORDER.indexOf(base) : ORDER.length) * (PHASES.length + 1) + phase + 1;
}

function chartData(lines) {
  if (lines.length === 1) return [lines[0].x, lines[0].y];
  return uPlot.join(lines.map((line) => [line.x, line.y]));
}

function restartMarks(lines) {
  // Each restart of this job: x, the first point of the attempt it began (where an earlier
  // attempt has points on the chart: a test value printed at the end is no restart), and the
  // nodes that left or joined then ("" when none).
  const ours = lines.filter((line) => line.job === JOB);
  const firstAttempt = Math.min(...ours.map((line) => line.attempt));
  const firsts = new Map(); // attempt -> its first x
  for (const line of ours) {
    if (line.attempt === firstAttempt) continue;
    firsts.set(line.attempt, Math.min(firsts.get(line.attempt) ?? Infinity, line.x[0]));
  }
  return [...firsts.keys()].sort((a, b) => a - b).map((attempt) => ({x: firsts.get(attempt), label: changes.get(attempt) || ""}));
}

function markRestarts(plot) {
  // A dashed vertical line at each restart, drawn over the curves; where the nodes changed, in
  // its own colour with what changed written beside its top.
  const marks = plot.restarts || [];
  const context = plot.ctx;
  context.save();
  context.setLineDash([6, 4]);
  context.font = Math.round(11 * devicePixelRatio) + "px sans-serif";
  context.textAlign = "left";
  context.textBaseline = "top";
  for (const {x, label} of marks) {
    const position = plot.valToPos(x, "x", true);
    context.strokeStyle = context.fillStyle = label ? CHANGE_COLOUR : "#888";
    context.beginPath();
    context.moveTo(position, plot.bbox.top);
    context.lineTo(position, plot.bbox.top + plot.bbox.height);
    context.stroke();
    if (label) context.fillText(label, position + 4, plot.bbox.top + 4);
  }
  context.restore();
}

function draw(name, lines, marks, where, xLabel) {
  const data = chartData(lines);
  // A chart is made anew when its lines or its x axis change (a restart adds lines); its box
  // stays where it is.
  const key = xLabel + "|" + lines.map((line) => line.label + " " + line.colour).join("|");
  // The points stored; the API sends a chart's worth of them (the lowest and highest kept).
  const points = lines.reduce((total, line) => total + line.count, 0);
  const drawn = lines.reduce((total, line) => total + line.y.length, 0);
  let chart = charts.get(name);
  if (!chart) {
    const box = document.createElement("div");
    box.className = "chart";
    box.dataset.metric = name;
    const title = document.createElement("h3");
    title.textContent = name;
    box.appendChild(title);
    document.getElementById(where).appendChild(box);
    chart = {box};
    charts.set(name, chart);
  }
  if (chart.key !== key) {
    if (chart.plot) chart.plot.destroy();
    const options = {
      width: 560,
      height: 260,
      scales: {x: {time: false}},
      series: [{label: xLabel}, ...lines.map((line) => ({label: line.label, stroke: COLORS[line.colour % COLORS.length], width: 1.5}))],
      axes: [{label: xLabel}, {}],
      hooks: {draw: [markRestarts]},
    };
    // uPlot draws what it is made with after the constructor returns; nothing may redraw it
    // before: a redraw then sets the x scale to the one not computed yet (none), and nothing
    // is drawn until the next setData (a finished job's page has none).
    chart.plot = new uPlot(options, data, chart.box);
    chart.key = key;
  } else {
    chart.plot.setData(data);
  }
  chart.plot.restarts = marks; // read when the curves are drawn
  chart.box.dataset.axis = xLabel;
  chart.box.dataset.restarts = String(marks.length);
  chart.box.dataset.marks = marks.map((mark) => mark.x).join(",");
  chart.box.dataset.changes = marks.map((mark) => mark.label).filter(Boolean).join("; ");
  chart.box.dataset.points = String(points);
  chart.box.dataset.drawn = String(drawn);
  chart.box.dataset.lines = String(lines.length);
}

async function refreshMetrics() {
  const jobs = [JOB, ...(COMPARE ? [COMPARE] : [])];
  if (COMPARE && jobNames.size === 0) await nameJobs(jobs);
  const results = await Promise.all(jobs.map(async (job) => [job, await getJSON(API + job + "/metrics?times=1")]));
  const started = performance.now();
  const all = curves(results);
  for (const [name, {axis, lines}] of all) draw(name, lines, restartMarks(lines), "charts", axis);
  document.getElementById("no-metrics").hidden = all.length > 0;
  document.body.dataset.drawMs = String(Math.round(performance.now() - started));
  document.body.dataset.metricsLoaded = String(Number(document.body.dataset.metricsLoaded || 0) + 1);
}

function resourceChart(series) {
  // [chart, line label]: nodes' and ranks' CPU (or memory) on one chart, each accelerator's on another.
  const found = series.name.match(/^(node|gpu|npu)(\d+)\/(.+)$/);
  if (found && found[1] === "node") return [found[3], "node " + found[2]];
  if (found) return [found[1] + " " + found[3], found[1] + " " + found[2]];
  if (series.name.startsWith("host/")) return [series.name, "host"];
  return [series.name, "rank " + series.rank];
}

async function refreshResources(detailsShown = Promise.resolve()) {
  // Drawn once the job's details are shown: they say when its restarts began.
  const result = await getJSON(API + JOB + "/resources");
  await detailsShown;
  const start = Math.min(...result.series.map((series) => series.times[0]));
  const marks = restarts.map(({time, label}) => ({x: Math.round(time - start), label})).filter((mark) => mark.x >= 0);
  const byChart = new Map();
  for (const series of result.series) {
    const [chart, label] = resourceChart(series);
    if (!byChart.has(chart)) byChart.set(chart, []);
    const lines = byChart.get(chart);
    lines.push({label, colour: lines.length, x: series.times.map((t) => Math.round(t - start)), y: series.values, count: series.count});
  }
  for (const [chart, lines] of [...byChart.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    draw("resources " + chart, lines, marks, "resources", "seconds");
  }
  document.getElementById("no-resources").hidden = byChart.size > 0;
  document.body.dataset.resourcesLoaded = String(Number(document.body.dataset.resourcesLoaded || 0) + 1);
}

function showDetails(job) {
  active = ACTIVE.includes(job.state);
  if (!active) {
    document.getElementById("no-metrics").textContent =
      "This job ended without metrics: no line of its output matched a built-in rule. Read your own " +
      "series with --metric NAME=REGEX when you submit it (e.g. --metric 'acc=acc=([0-9.]+)').";
  }
  const state = document.getElementById("state");
  state.textContent = job.state + (job.cause ? ": " + job.cause : "");
  state.className = "state " + job.state;
  const progress = job.progress;
  document.getElementById("summary").textContent =
    job.engine + ", " + (job.flavor ? "flavor " + job.flavor + ", " : "") + job.nodes + " node(s) x " +
    job.cards + " card(s); attempts " + job.attempts + "; exit code " + (job.exit_code === null ? "-" : job.exit_code) +
    "; started " + when(job.started_iso) + ", duration " + duration(job.duration) +
    (progress.step !== null ? "; step " + progress.step : "") +
    (progress.loss !== null ? ", loss " + number(progress.loss) : "") +
    (job.rerun_of ? "; rerun of " + job.rerun_of : "");
  const events = document.querySelector("#events tbody");
  events.replaceChildren();
  for (const event of job.events) {
    const row = events.insertRow();
    cell(row, when(event.time_iso));
    cell(row, event.state);
    cell(row, event.detail);
  }
  showVerdict(job.verdict);
  showAttempts(job.attempts_detail);
  document.getElementById("spec").textContent = JSON.stringify(job.spec, null, 2);
  const logs = document.getElementById("logs");
  for (let rank = 0; rank < Math.min(job.ranks, LOG_RANKS); rank++) {
    if (document.getElementById("log-" + rank)) continue;
    const box = document.createElement("details");
    box.className = "log";
    box.open = rank < 4;
    const title = document.createElement("summary");
    title.textContent = "rank " + rank;
    const pre = document.createElement("pre");
    pre.id = "log-" + rank;
    box.append(title, pre);
    logs.appendChild(box);
  }
}

function showVerdict(verdict) {
  // Why a failed job failed, as `job describe` says it: the rank that went wrong first, its line,
  // the catalogue's meaning, likely causes, fix and source, then the ranks that failed because of it.
  const section = document.getElementById("verdict-section");
  section.hidden = !verdict || !verdict.root;
  if (section.hidden || section.dataset.shown) return; // a failed job's verdict does not change
  section.dataset.shown = "yes";
  const root = verdict.root, headline = root.headline;
  const box = document.getElementById("verdict");
  const add = (tag, text, className) => {
    const element = document.createElement(tag);
    if (text !== undefined) element.textContent = text;
    if (className) element.className = className;
    box.appendChild(element);
    return element;
  };
  const rank = (who) => (typeof who === "number" ? "rank " + who : String(who));
  add("p", (verdict.all_echo ? "First rank to time out (no rank failed by itself): " : "Root cause: ") +
    rank(root.rank) + ", first went wrong at " + when(root.first_time_iso), "root");
  add("pre", headline.text, "line");
  add("p", "at " + headline.path + ":" + headline.line, "where");
  add("p", "[" + headline.id + ", " + headline.layer + "] " + headline.meaning, "signature");
  add("p", "Likely causes:");
  const causes = add("ol");
  for (const cause of headline.causes) {
    const item = document.createElement("li");
    item.textContent = cause;
    causes.appendChild(item);
  }
  add("p", "Fix: " + headline.fix, "fix");
  if (headline.oom) add("p", "Memory: " + headline.oom.advice, "memory");
  const source = add("p", "Source: ");
  const link = document.createElement("a");
  link.href = headline.source;
  link.textContent = headline.source;
  source.appendChild(link);
  if (verdict.consequences.length > 0) {
    add("p", verdict.all_echo ? "Then:" : "Consequences (later, or waiting for it):");
    const list = add("ul", undefined, "consequences");
    for (const report of verdict.consequences) {
      const item = document.createElement("li");
      const found = report.headline;
      item.textContent = rank(report.rank) + " at " + when(report.first_time_iso) + ": " + found.id + " (" + found.role + "): " + found.text;
      list.appendChild(item);
    }
  }
  add("p", "Order of failure: " + verdict.order.map(rank).join(", "), "order");
}

function showAttempts(attempts) {
  // Each attempt: when, how it ended, each rank's exit code; the stacks of a hang, foldable.
  for (const attempt of attempts) if (attempt.membership_change) changes.set(attempt.attempt, attempt.membership_change);
  restarts = attempts.slice(1).map((attempt) => ({time: attempt.start, label: attempt.membership_change}));
  const box = document.getElementById("attempts");
  box.replaceChildren();
  document.getElementById("attempts-section").hidden = attempts.length === 0;
  for (const attempt of attempts) {
    const line = document.createElement("p");
    const codes = Object.entries(attempt.exit_codes).map(([rank, code]) => "rank " + rank + ": " + code).join(", ");
    const change = attempt.membership_change ? " (" + attempt.membership_change + ")" : "";
    line.textContent = "attempt " + attempt.attempt + change + ": " + when(attempt.start_iso) + " - " + when(attempt.end_iso) + ", " +
      attempt.state + (attempt.cause ? " (" + attempt.cause + ")" : "") + (attempt.reason ? ": " + attempt.reason : "") +
      (codes ? "; exit codes " + codes : "");
    box.appendChild(line);
    for (const [rank, stack] of Object.entries(attempt.stacks).sort((a, b) => Number(a[0]) - Number(b[0]))) {
      const fold = document.createElement("details");
      fold.className = "stack";
      fold.open = true;
      const title = document.createElement("summary");
      title.textContent = "stack of rank " + rank + " (attempt " + attempt.attempt + ")";
      const pre = document.createElement("pre");
      pre.textContent = stack;
      fold.append(title, pre);
      box.appendChild(fold);
    }
  }
}

async function refreshLogs() {
  for (const pre of document.querySelectorAll("#logs pre")) {
    const rank = Number(pre.id.slice(4));
    const offset = logOffsets.get(rank);
    const url = API + JOB + "/logs?rank=" + rank + (offset === undefined ? "" : "&offset=" + offset);
    const tail = await getJSON(url);
    logOffsets.set(rank, tail.offset);
    if (!tail.text) continue;
    const follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = (pre.textContent + tail.text).slice(-LOG_KEEP);
    if (follow) pre.scrollTop = pre.scrollHeight;
  }
}

async function fillCompare() {
  const select = document.getElementById("compare");
  for (const job of await getJSON(API.slice(0, -1))) {
    if (job.id === JOB) continue;
    const option = new Option(job.id + " " + job.name + " (" + job.state + ")", job.id);
    option.selected = job.id === COMPARE;
    select.add(option);
  }
  select.addEventListener("change", () => {
    const query = select.value ? "?compare=" + encodeURIComponent(select.value) : "";
    location.search = query;
  });
}

function actions() {
  for (const action of ["stop", "rerun"]) {
    const button = document.getElementById(action);
    if (!button) continue;
    button.addEventListener("click", async () => {
      const shown = document.getElementById("action-result");
      const token = document.body.dataset.token;
      if (!token) {
        shown.textContent = "open the page with the URL `ascendify job ui` printed (it holds the token actions need)";
        return;
      }
      const response = await fetch(API + JOB + "/" + action, {method: "POST", headers: {"X-Ascendify-Token": token}});
      const result = await response.json();
      shown.textContent = response.ok ? (action === "rerun" ? "rerun: " : "stopping ") + result.job : result.error || response.status;
      if (response.ok && action === "rerun") location.href = result.job;
    });
  }
}

async function tick(count) {
  // The curves load beside the details and logs, not after them (a long run has many points).
  const restartsSeen = JSON.stringify(restarts);
  const detailsShown = getJSON(API + JOB).then(showDetails);
  const curves = count % 2 === 0 ? Promise.all([refreshMetrics(), refreshResources(detailsShown)]) : Promise.resolve();
  await detailsShown;
  await Promise.all([refreshLogs(), curves]);
  // The job has just ended: its last points were stored before its final state, so read them
  // once more (a job ended before the page opened has them all in the first read); a restart
  // seen now is marked on the curves.
  if ((!active && count > 0) || JSON.stringify(restarts) !== restartsSeen) {
    await Promise.all([refreshMetrics(), refreshResources()]);
  }
  if (active) setTimeout(() => tick(count + 1).catch(report), 1000);
}

function report(error) {
  document.getElementById("summary").textContent = String(error);
}

actions();
fillCompare().catch(report);
tick(0).catch(report);
