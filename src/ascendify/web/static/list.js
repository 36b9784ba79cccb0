"use strict";
// The job list: refreshed from /api/jobs every two seconds; a filter by state, a search by name
// or id, and pages of PAGE jobs.
const PAGE = 100;
let offset = 0;

function query() {
  const state = document.getElementById("state-filter").value;
  const text = document.getElementById("search").value.trim();
  return "api/jobs?offset=" + offset + "&limit=" + PAGE + (state ? "&state=" + encodeURIComponent(state) : "") +
    (text ? "&q=" + encodeURIComponent(text) : "");
}

async function refresh() {
  const response = await fetch(query(), {cache: "no-store"});
  if (!response.ok) throw new Error("api/jobs: HTTP " + response.status);
  const jobs = await response.json();
  const total = Number(response.headers.get("X-Total-Count") || jobs.length);
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren();
  for (const job of jobs) {
    const row = body.insertRow();
    row.dataset.job = job.id;
    cell(row, job.id, "jobs/" + job.id);
    cell(row, job.name);
    cell(row, job.engine);
    cell(row, job.flavor || "-");
    cell(row, job.nodes + " x " + job.cards);
    const state = cell(row, job.state + (job.cause === "runner lost" ? " (runner lost)" : ""));
    state.className = "state " + job.state;
    cell(row, job.exit_code === null ? "-" : String(job.exit_code));
    cell(row, job.cause || "-");
    cell(row, String(job.attempts));
    const progress = job.progress;
    cell(row, progress.step === null ? "-" : String(progress.step));
    cell(row, number(progress.loss));
    cell(row, progress.throughput ? number(progress.throughput[1]) + " " + progress.throughput[0] : "-");
    cell(row, when(job.started_iso));
    cell(row, duration(job.duration));
  }
  document.getElementById("empty").hidden = total > 0;
  document.getElementById("shown").textContent =
    total ? (offset + 1) + "-" + (offset + jobs.length) + " of " + total : "";
  document.getElementById("previous").disabled = offset === 0;
  document.getElementById("next").disabled = offset + PAGE >= total;
  document.body.dataset.listLoaded = String(Number(document.body.dataset.listLoaded || 0) + 1);
}

function again() {
  refresh().catch((error) => { document.getElementById("shown").textContent = String(error); });
}
for (const id of ["state-filter", "search"]) {
  document.getElementById(id).addEventListener("input", () => { offset = 0; again(); });
}
document.getElementById("previous").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); again(); });
document.getElementById("next").addEventListener("click", () => { offset += PAGE; again(); });
again();
setInterval(again, 2000);
