// The tournaments page (services/web/tournaments.py): /api/tournaments every two seconds,
// one row per tournament; its tables link to their table pages.
"use strict";
(function () {
  const body = document.querySelector("#tournaments tbody");

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function endsIn(ms) {
    if (!ms) return "";
    const left = Math.max(0, Math.round((ms - Date.now()) / 1000));
    return Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
  }

  function render(list) {
    body.textContent = "";
    for (const t of list) {
      const row = document.createElement("tr");
      row.dataset.id = t.id;
      cell(row, t.name === t.id ? t.id : t.name + " (" + t.id + ")");
      cell(row, t.status + (t.hand_for_hand ? ", hand-for-hand" : "") +
        (t.winner ? ", won by " + t.winner : ""));
      cell(row, t.kind + ", " + t.buy_in + "+" + t.fee + ", " + t.starting_stack + " chips" +
        (t.late_levels ? ", late registration " + t.late_levels + " levels" : "") +
        (t.max_entries > 1 ? ", " + t.max_entries + " entries" : "") +
        (t.rebuy_levels ? ", " + t.max_rebuys + " rebuys of " + t.rebuy_chips + " for " +
          t.rebuy_price + " (" + t.rebuy_levels + " levels)" : "") +
        (t.add_on_chips ? ", add-on " + t.add_on_chips + " for " + t.add_on_price : ""));
      cell(row, t.in + " in of " + t.entries + " (" + t.max_players + " max)");
      cell(row, t.level ? t.level + ": " + t.blinds : "");
      cell(row, t.status === "running" ? endsIn(t.level_ends_unix_ms) : "");
      cell(row, t.prize_pool ? t.prize_pool + " (" + t.prizes.join("/") + ")" : "");
      const tables = cell(row, "");
      for (const table of t.tables) {
        const a = document.createElement("a");
        a.href = "/table/" + encodeURIComponent(table.id);
        a.textContent = table.id + " (" + table.players + ")";
        tables.appendChild(a);
        tables.appendChild(document.createTextNode(" "));
      }
      body.appendChild(row);
    }
  }

  async function refresh() {
    try {
      const reply = await fetch("/api/tournaments");
      if (reply.ok) render(await reply.json());
    } catch (e) { /* the next refresh tries again */ }
  }

  refresh();
  setInterval(refresh, 2000);
})();
