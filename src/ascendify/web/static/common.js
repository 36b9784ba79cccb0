"use strict";
// Shared by the pages: fetching the API and showing times.
async function getJSON(url) {
  const response = await fetch(url, {cache: "no-store"});
  if (!response.ok) throw new Error(url + ": HTTP " + response.status);
  return response.json();
}
function when(iso) {
  // A moment as the API gives it (its *_iso fields): ISO 8601 with the zone, as the CLI prints it.
  return iso || "-";
}
function duration(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  const s = Math.floor(seconds), pad = (n) => String(n).padStart(2, "0");
  return pad(Math.floor(s / 3600)) + ":" + pad(Math.floor(s / 60) % 60) + ":" + pad(s % 60);
}
function number(value) {
  if (value === null || value === undefined) return "-";
  return Math.abs(value) >= 1000 || Number.isInteger(value) ? String(Math.round(value * 100) / 100) : value.toPrecision(4);
}
function cell(row, text, href) {
  const td = row.insertCell();
  if (href) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    td.appendChild(a);
  } else {
    td.textContent = text;
  }
  return td;
}
const ACTIVE = ["queued", "running", "stopping"];
