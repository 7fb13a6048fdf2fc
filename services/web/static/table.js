// A table as a spectator sees it, one view per commit from the table service's Watch.
"use strict";
const felt = document.getElementById("felt");
const tableId = felt.dataset.table;
const status = document.getElementById("status");
let view = null;
let skew = 0; // the server's clock minus ours, from the view's server time

// card(code): cards.js

const actions = document.getElementById("actions");
const error = document.getElementById("error");
const sitForm = document.getElementById("sit");

async function post(path, body) {
  const reply = await fetch("/api/tables/" + encodeURIComponent(tableId) + path, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  const out = await reply.json();
  error.textContent = reply.ok ? "" : out.error;
  return reply.ok ? out : null;
}

function button(label, action, amount) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.dataset.action = action;
  b.onclick = () => post("/act", { action, hand_no: Number(view.hand_no),
                                   amount: amount === undefined ? null : amount() });
  return b;
}

// The legal actions of the player on turn, when that is this session's seat.
function renderActions(v) {
  actions.replaceChildren();
  if (!v.you || v.to_act !== v.you || !v.legal) return;
  const l = v.legal;
  if (l.can_fold) actions.append(button("fold", "fold"));
  if (l.can_check) actions.append(button("check", "check"));
  if (Number(l.call) > 0) actions.append(button("call " + l.call, "call"));
  if (Number(l.bring_in) > 0) actions.append(button("bring in " + l.bring_in, "bring_in"));
  const kind = l.raise_kind ? l.raise_kind.replace("ACTION_KIND_", "").toLowerCase() : "";
  if (kind) {
    const slider = document.createElement("input");
    slider.type = "range";
    slider.id = "amount";
    slider.min = String(l.min_to);
    slider.max = String(l.max_to);
    slider.value = String(l.min_to);
    const shown = document.createElement("span");
    shown.textContent = slider.value;
    slider.oninput = () => { shown.textContent = slider.value; };
    actions.append(button(kind + " to", kind, () => Number(slider.value)), slider, shown);
  }
}

// session: session.js. A signed-in player who holds no seat here may sit down; one the table
// shows at a seat this page does not play from (another device, an earlier sign-in) may take
// it back here ("play from this page"); a seated player may leave.
let me = null;
const resume = document.getElementById("resume");
const leave = document.getElementById("leave");
session.then((s) => {
  me = s.subject || null;
  if (me && !(s.seats && s.seats[tableId])) sitForm.hidden = false;
  if (view) renderSeatButtons(view);
});
sitForm.onsubmit = async (e) => {
  e.preventDefault();
  const out = await post("/sit", { seat: Number(document.getElementById("sit-seat").value),
                                   buy_in: Number(document.getElementById("sit-buy-in").value) });
  if (out) location.reload(); // follow the table as seated, with this seat's own view
};
function mySeat(v) {
  const s = me ? v.seats.find((x) => x.player_id === me) : null;
  return s ? s.seat : 0;
}
function renderSeatButtons(v) {
  const mine = mySeat(v);
  resume.hidden = !(mine && !v.you);
  leave.hidden = !v.you;
  if (mine) sitForm.hidden = true;
}
resume.onclick = async () => {
  if (await post("/sit", { seat: mySeat(view) })) location.reload();
};
leave.onclick = async () => {
  if (await post("/leave", {})) location.reload();
};
// What a seat's player is called: their name, else their id.
function nameOf(s) { return s.name || s.player_id; }

// The last actions, read from what changed between two views of the same hand: a seat that
// folded, put chips in (called, bet or raised to its new bet), or checked (its turn passed).
const recent = [];
function noteActions(before, v) {
  if (!before || before.hand_no !== v.hand_no) {
    if (Number(v.hand_no)) recent.unshift("hand " + v.hand_no + " starts");
  } else {
    const was = new Map(before.seats.map((s) => [s.seat, s]));
    for (const s of v.seats) {
      const b = was.get(s.seat);
      if (!b) continue;
      if (s.folded && !b.folded) recent.unshift(nameOf(s) + " folds");
      else if (Number(s.bet) > Number(b.bet) && before.phase === "bet")
        recent.unshift(nameOf(s) + (Number(b.bet) === Number(before.current_bet) ?
          " bets to " : Number(s.bet) > Number(before.current_bet) ? " raises to " :
          " calls to ") + s.bet);
      else if (before.to_act === s.seat && v.to_act !== s.seat && s.bet === b.bet &&
               !s.folded && v.street === before.street)
        recent.unshift(nameOf(s) + " checks");
    }
  }
  recent.splice(8);
  const list = document.getElementById("recent");
  list.replaceChildren(...recent.map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

function render(v) {
  noteActions(view, v);
  view = v;
  felt.dataset.version = String(v.version);
  renderActions(v);
  renderSeatButtons(v);
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
    name.textContent = (s.seat === v.button ? "(D) " : "") + s.seat + ": " + nameOf(s);
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

// The table's live views. A dropped stream is reconnected by the browser itself; a refused
// one (429 over the live-view limits, 503) closes, so it is opened again after a wait that
// grows (at most 30 s), as the server's Retry-After asks.
let retryMs = 2000;
function follow() {
  const source = new EventSource("/api/tables/" + encodeURIComponent(tableId) + "/events");
  source.onmessage = (e) => { retryMs = 2000; render(JSON.parse(e.data)); };
  source.onerror = () => {
    status.textContent = "reconnecting…";
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(follow, retryMs);
      retryMs = Math.min(retryMs * 2, 30000);
    }
  };
}
follow();
setInterval(tick, 200);
