// The lobby: the log's public tables, followed over server-sent events, filtered here by
// game, stakes and seats free.
"use strict";
const body = document.querySelector("#lobby tbody");
const fGame = document.getElementById("f-game");
const fStakes = document.getElementById("f-stakes");
const fFree = document.getElementById("f-free");
let tables = [];

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
  return td;
}

// A select's options: "any" and every value the tables have, the chosen one kept.
function options(select, values) {
  const chosen = select.value;
  const keep = [...new Set(values)].sort();
  select.replaceChildren(new Option("any", ""), ...keep.map((v) => new Option(v, v)));
  select.value = keep.includes(chosen) ? chosen : "";
}

function words(text) { return text.replace(/_/g, " "); }

function render() {
  options(fGame, tables.map((t) => t.game));
  options(fStakes, tables.map((t) => t.stakes));
  const free = Number(fFree.value) || 0;
  body.replaceChildren();
  for (const t of tables) {
    if ((fGame.value && t.game !== fGame.value) || (fStakes.value && t.stakes !== fStakes.value)
        || t.max_seats - t.seats_taken < free) continue;
    const row = document.createElement("tr");
    row.dataset.table = t.table_id;
    const link = document.createElement("a");
    link.href = "/table/" + encodeURIComponent(t.table_id);
    link.textContent = t.table_id;
    cell(row, "").appendChild(link);
    cell(row, words(t.game));
    cell(row, words(t.structure));
    cell(row, t.stakes);
    cell(row, t.min_buy_in + " to " + t.max_buy_in).className = "buy-in";
    cell(row, t.seats_taken + "/" + t.max_seats);
    cell(row, String(t.hand_no));
    cell(row, t.hands_per_hour === null || t.hands_per_hour === undefined ? "…"
      : String(Math.round(t.hands_per_hour))).className = "rate";
    cell(row, t.paused ? "paused" : t.closing ? "closing" : t.phase_words).className = "phase";
    body.appendChild(row);
  }
}

for (const f of [fGame, fStakes, fFree]) f.oninput = render;
new EventSource("/api/lobby/events").onmessage = (e) => {
  tables = JSON.parse(e.data).tables;
  render();
};
