// The lobby: the log's public tables, followed over server-sent events.
"use strict";
const body = document.querySelector("#lobby tbody");

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
  return td;
}

function render(tables) {
  body.replaceChildren();
  for (const t of tables) {
    const row = document.createElement("tr");
    row.dataset.table = t.table_id;
    const link = document.createElement("a");
    link.href = "/table/" + encodeURIComponent(t.table_id);
    link.textContent = t.table_id;
    cell(row, "").appendChild(link);
    cell(row, t.game);
    cell(row, t.structure);
    cell(row, t.stakes);
    cell(row, t.seats_taken + "/" + t.max_seats);
    cell(row, String(t.hand_no));
    cell(row, t.hands_per_hour === null || t.hands_per_hour === undefined ? "…"
      : String(t.hands_per_hour));
    cell(row, t.paused ? "paused" : t.closing ? "closing" : t.phase);
    body.appendChild(row);
  }
}

new EventSource("/api/lobby/events").onmessage = (e) => render(JSON.parse(e.data).tables);
