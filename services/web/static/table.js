// A table as a spectator sees it, one view per commit from the table service's Watch.
"use strict";
const felt = document.getElementById("felt");
const tableId = felt.dataset.table;
const status = document.getElementById("status");
let view = null;
let skew = 0; // the server's clock minus ours, from the view's server time

function card(code) {
  const img = document.createElement("img");
  img.className = "card";
  img.src = "/cards/" + encodeURIComponent(code) + ".svg";
  img.alt = code;
  img.dataset.card = code;
  return img;
}

function render(v) {
  view = v;
  skew = Number(v.server_unix_ms) - Date.now();
  const board = document.getElementById("board");
  board.replaceChildren(...v.board.map(card));
  const pots = v.pots.map((p) => String(p.amount)).join(" + ");
  const last = document.getElementById("last-hand");
  if (Number(v.hand_no) > 1) {
    last.href = "/table/" + encodeURIComponent(tableId) + "/hands/" + (Number(v.hand_no) - 1);
    last.textContent = "hand " + (Number(v.hand_no) - 1) + ", step by step";
  }
  document.getElementById("pot").textContent =
    "hand " + v.hand_no + " · " + v.phase + " · pot " + v.pot + (pots ? " (" + pots + ")" : "");
  const seats = document.getElementById("seats");
  seats.replaceChildren();
  for (const s of v.seats) {
    const div = document.createElement("div");
    div.className = "seat" + (s.seat === v.to_act ? " on-turn" : "") + (s.folded ? " folded" : "");
    div.dataset.seat = String(s.seat);
    div.dataset.shown = String(s.shown);
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = (s.seat === v.button ? "(D) " : "") + s.seat + ": " + s.player_id;
    const chips = document.createElement("div");
    chips.className = "chips";
    chips.textContent = "stack " + s.stack + (s.bet ? " · bet " + s.bet : "") +
      (s.all_in ? " · all in" : "") + (s.sitting_out ? " · sitting out" : "");
    const cards = document.createElement("div");
    cards.className = "cards";
    cards.replaceChildren(...s.cards.map(card));
    div.append(name, chips, cards);
    seats.appendChild(div);
  }
  tick();
}

function tick() {
  if (!view) return;
  const deadline = Number(view.deadline_unix_ms);
  if (view.to_act && deadline) {
    const left = Math.max(0, (deadline - (Date.now() + skew)) / 1000);
    status.textContent = "seat " + view.to_act + " to act · " + left.toFixed(1) + " s";
  } else {
    status.textContent = view.paused ? "paused" : "";
  }
}

const source = new EventSource("/api/tables/" + encodeURIComponent(tableId) + "/events");
source.onmessage = (e) => render(JSON.parse(e.data));
source.onerror = () => { status.textContent = "reconnecting…"; };
setInterval(tick, 200);
