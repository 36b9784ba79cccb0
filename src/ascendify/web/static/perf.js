"use strict";
// The job's profile (submitted with --profile), as `ascendify perf` reads it: the verdict, each
// rank's median step as a stacked bar (computing, communication not overlapped, free, preparing)
// and the operators that take the most time. Asked for until the ranks have written their traces.
const PERF_PARTS = [
  ["computing_ms", "computing", "#1f77b4"],
  ["communication_not_overlapped_ms", "communication not overlapped", "#d62728"],
  ["free_ms", "free", "#bbbbbb"],
  ["preparing_ms", "preparing", "#ff7f0e"],
];
const PERF_RETRY_MS = 15000;

function perfBar(rank, longest, slow) {
  const row = document.createElement("div");
  row.className = "perf-row";
  const label = document.createElement("span");
  label.className = "perf-label";
  label.textContent = "rank " + rank.rank + (slow ? " (slow)" : "");
  const bar = document.createElement("span");
  bar.className = "perf-bar";
  for (const [key, name, color] of PERF_PARTS) {
    const part = document.createElement("span");
    part.className = "perf-part";
    part.dataset.part = key;
    part.style.width = (100 * rank.median[key] / longest) + "%";
    part.style.background = color;
    part.title = name + ": " + number(rank.median[key]) + " ms";
    bar.appendChild(part);
  }
  const total = document.createElement("span");
  total.textContent = " " + number(rank.median.step_ms) + " ms";
  row.append(label, bar, total);
  return row;
}

function perfOperators(ranks) {
  const totals = new Map();
  for (const rank of ranks) {
    for (const op of rank.top_operators) totals.set(op.name, (totals.get(op.name) || 0) + op.total_ms);
  }
  const table = document.createElement("table");
  table.id = "perf-operators";
  for (const [name, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 5)) {
    const row = table.insertRow();
    cell(row, number(ms) + " ms");
    cell(row, name.length > 100 ? name.slice(0, 97) + "..." : name);
  }
  return table;
}

function showPerf(perf) {
  const box = document.getElementById("perf");
  const verdict = document.createElement("p");
  verdict.id = "perf-verdict";
  verdict.textContent = perf.verdict;
  const legend = document.createElement("p");
  legend.className = "note";
  legend.textContent = "Median step per rank: " + PERF_PARTS.map((part) => part[1]).join(", ") + " (ascendify perf " + JOB + ").";
  const longest = Math.max(...perf.ranks.map((rank) => rank.median.step_ms)) || 1;
  const bars = document.createElement("div");
  bars.id = "perf-bars";
  for (const rank of perf.ranks) bars.appendChild(perfBar(rank, longest, perf.slow_ranks.includes(rank.rank)));
  box.replaceChildren(verdict, legend, bars, perfOperators(perf.ranks));
  for (const problem of perf.problems) {
    const line = document.createElement("p");
    line.className = "note";
    line.textContent = "rank " + problem.rank + ": " + problem.message;
    box.appendChild(line);
  }
  document.getElementById("perf-section").hidden = false;
}

async function refreshPerf() {
  const result = await getJSON(API + JOB + "/perf");
  if (result.perf) showPerf(result.perf);
  else setTimeout(() => refreshPerf().catch(report), PERF_RETRY_MS);
}

refreshPerf().catch(report);
