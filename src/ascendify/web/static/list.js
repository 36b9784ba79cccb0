"use strict";
// The job list: refreshed from /api/jobs every two seconds.
async function refresh() {
  const jobs = await getJSON("api/jobs");
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren();
  for (const job of jobs) {
    const row = body.insertRow();
    row.dataset.job = job.id;
    cell(row, job.id, "jobs/" + job.id);
    cell(row, job.name);
    cell(row, job.engine);
    cell(row, job.nodes + " x " + job.cards);
    const state = cell(row, job.state + (job.cause === "runner lost" ? " (runner lost)" : ""));
    state.className = "state " + job.state;
    cell(row, String(job.attempts));
    const progress = job.progress;
    cell(row, progress.step === null ? "-" : String(progress.step));
    cell(row, number(progress.loss));
    cell(row, progress.throughput ? number(progress.throughput[1]) + " " + progress.throughput[0] : "-");
    cell(row, when(job.started));
    cell(row, duration(job.duration));
  }
  document.getElementById("empty").hidden = jobs.length > 0;
}
refresh();
setInterval(refresh, 2000);
