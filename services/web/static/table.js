// A table: one view per commit from the table service's Watch (as a spectator, or as the
// session's seat with its own cards and legal actions), and the hand's actions and result
// from the log (/api/tables/ID/log: read, never inferred from differences between views).
"use strict";
const felt = document.getElementById("felt");
const tableId = felt.dataset.table;
const base = "/api/tables/" + encodeURIComponent(tableId);
const $ = (id) => document.getElementById(id);
const status = $("status");
const actions = $("actions");
const error = $("error");
const sitForm = $("sit");
let view = null;
let skew = 0; // the server's clock minus ours, from the view's server time
let me = null; // the signed-in player's id
let wallet = null; // their wallet balance, when known

// card(code): cards.js

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function post(path, body) {
  const reply = await fetch(base + path, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  const out = await reply.json();
  error.textContent = reply.ok ? "" : out.error;
  return reply.ok ? out : null;
}

function nameOf(s) { return s.name || s.player_id; }
function n(x) { return Number(x || 0); }

// --- acting: the legal actions of the seat on turn, when it is this session's ------------

function actButton(label, action, amount) {
  const b = el("button", "act", label);
  b.type = "button";
  b.dataset.action = action;
  b.onclick = () => post("/act", { action, hand_no: n(view.hand_no),
                                   amount: amount === undefined ? null : amount() });
  return b;
}

function raiseControls(v, kind) {
  const l = v.legal, lo = n(l.min_to), hi = n(l.max_to);
  const sizes = (l.raise_sizes || []).map(Number);
  if (sizes.length || lo === hi) { // fixed limit (or one amount left): just that amount
    return (sizes.length ? sizes : [lo]).map((to) => actButton(kind + " to " + to, kind, () => to));
  }
  const box = el("input");
  box.type = "number"; box.id = "amount-box"; box.min = String(lo); box.max = String(hi);
  box.value = String(lo); box.inputMode = "numeric";
  const slider = el("input");
  slider.type = "range"; slider.id = "amount"; slider.min = String(lo); slider.max = String(hi);
  slider.value = String(lo);
  const clamp = (x) => Math.min(hi, Math.max(lo, Math.round(Number(x) || lo)));
  const set = (x) => { box.value = slider.value = String(clamp(x)); };
  slider.oninput = () => { box.value = slider.value; };
  box.onchange = () => set(box.value);
  // The presets' amounts are the server's (the core's rules: betting.raise_presets).
  const presets = el("span", "presets");
  const names = [["min", "min"], ["half", "½ pot"], ["pot", "pot"], ["allin", "all-in"]];
  for (const [which, label] of names) {
    if (!(which in (v.presets || {}))) continue;
    const b = el("button", "preset", label);
    b.type = "button";
    b.dataset.preset = which;
    b.dataset.amount = String(v.presets[which]);
    b.onclick = () => set(v.presets[which]);
    presets.append(b);
  }
  return [presets, slider, box, actButton(kind + " to", kind, () => clamp(box.value))];
}

function renderActions(v) {
  actions.replaceChildren();
  if (!v.you || v.to_act !== v.you || !v.legal) return;
  const l = v.legal;
  if (l.can_fold) actions.append(actButton("fold", "fold"));
  if (l.can_check) actions.append(actButton("check", "check"));
  if (n(l.call) > 0) actions.append(actButton("call " + l.call, "call"));
  if (n(l.bring_in) > 0) actions.append(actButton("bring in " + l.bring_in, "bring_in"));
  const kind = l.raise_kind ? l.raise_kind.replace("ACTION_KIND_", "").toLowerCase() : "";
  if (kind) actions.append(...raiseControls(v, kind));
}

// --- sitting, leaving, sitting out, topping up ---------------------------------------------

function mySeat(v) {
  const s = me ? v.seats.find((x) => x.player_id === me) : null;
  return s || null;
}

function showWallet() {
  const w = $("wallet");
  w.hidden = wallet === null;
  w.textContent = wallet === null ? "" : "your wallet: " + wallet + " chips";
}

async function loadWallet() {
  const reply = await fetch("/api/wallet");
  wallet = reply.ok ? (await reply.json()).balance : null;
  showWallet();
  if (view) renderSit(view);
}

function chooseSeat(seat) {
  if (!me) { error.textContent = "sign in to sit down"; return; }
  $("sit-seat").value = String(seat);
  sitForm.hidden = false;
  renderSit(view);
  $("sit-buy-in").focus();
}

function renderSit(v) {
  const lo = n(v.min_buy_in), hi = n(v.max_buy_in);
  const box = $("sit-buy-in");
  box.min = String(lo); box.max = String(hi);
  if (!box.value) box.value = String(wallet === null ? lo : Math.max(lo, Math.min(hi, wallet)));
  const seat = $("sit-seat").value;
  $("sit-title").textContent = seat ? "sit down at seat " + seat : "choose an empty seat";
  $("sit-range").textContent = "buy-in " + lo + " to " + hi +
    (wallet === null ? "" : " · your wallet: " + wallet);
}

function renderControls(v) {
  const mine = mySeat(v);
  $("resume").hidden = !(mine && !v.you);
  $("leave").hidden = !v.you;
  $("sitout").hidden = !v.you || !mine || mine.sitting_out;
  $("sitin").hidden = !v.you || !mine || !mine.sitting_out;
  $("topup-box").hidden = !v.you || !mine;
  if (mine && !$("topup-amount").value)
    $("topup-amount").value = String(Math.max(1, n(v.max_buy_in) - n(mine.stack)));
  if (mine) sitForm.hidden = true;
}

session.then((s) => { // session: session.js
  me = s.subject || null;
  if (me && !(s.seats && s.seats[tableId])) sitForm.hidden = false;
  if (me) loadWallet();
  if (view) render(view);
});
sitForm.onsubmit = async (e) => {
  e.preventDefault();
  const out = await post("/sit", { seat: Number($("sit-seat").value),
                                   buy_in: Number($("sit-buy-in").value) });
  if (out) location.reload(); // follow the table as seated, with this seat's own view
};
$("sit-cancel").onclick = () => { $("sit-seat").value = ""; if (view) renderSit(view); };
$("resume").onclick = async () => { if (await post("/sit", { seat: mySeat(view).seat })) location.reload(); };
$("leave").onclick = async () => { if (await post("/leave", {})) location.reload(); };
$("sitout").onclick = () => post("/sitout", { sit_out: true });
$("sitin").onclick = () => post("/sitout", { sit_out: false });
$("topup").onclick = async () => {
  if (await post("/topup", { amount: Number($("topup-amount").value) })) loadWallet();
};

// --- the felt: seats around the oval, bets in front of them, pots, board ---------------------

function place(node, seat, max, rx, ry) {
  const a = Math.PI / 2 + 2 * Math.PI * (seat - 1) / max; // seat 1 at the bottom
  node.style.left = (50 + rx * Math.cos(a)).toFixed(1) + "%";
  node.style.top = (50 + ry * Math.sin(a)).toFixed(1) + "%";
}

function seatNode(v, s, you) {
  const div = el("div", "seat" + (s.seat === v.to_act ? " on-turn" : "") +
    (s.folded ? " folded" : "") + (s.seat === you ? " mine" : "") +
    (s.sitting_out ? " out" : ""));
  div.dataset.seat = String(s.seat);
  div.dataset.shown = String(s.shown);
  const name = el("div", "name", s.seat + ": " + nameOf(s) + (s.seat === you ? " (you)" : ""));
  if (s.seat === v.button) name.prepend(el("span", "button", "D"));
  const chips = el("div", "chips", "stack " + s.stack + (s.all_in ? " · all in" : "") +
    (s.sitting_out ? " · sitting out" : "") + (n(s.pending) ? " · +" + s.pending : ""));
  const cards = el("div", "cards");
  cards.replaceChildren(...s.cards.map(card));
  div.append(name, chips, cards);
  return div;
}

function emptySeat(v, seat, canSit) {
  const b = el("button", "seat empty");
  b.append(el("span", "", "seat " + seat), el("span", "", canSit ? "sit here" : "empty"));
  b.type = "button";
  b.dataset.seat = String(seat);
  b.disabled = !canSit;
  b.onclick = () => chooseSeat(seat);
  return b;
}

function renderFelt(v) {
  const max = n(v.max_seats) || v.seats.length || 2;
  const taken = new Map(v.seats.map((s) => [s.seat, s]));
  const you = v.you || (mySeat(v) || {}).seat || 0;
  const canSit = !mySeat(v) && !v.closing;
  const seats = $("seats");
  seats.replaceChildren();
  for (let seat = 1; seat <= max; seat++) {
    const s = taken.get(seat);
    const node = s ? seatNode(v, s, you) : emptySeat(v, seat, canSit);
    place(node, seat, max, 44, 42);
    seats.append(node);
    if (s && n(s.bet)) {
      const bet = el("div", "bet", String(s.bet));
      bet.dataset.seat = String(seat);
      place(bet, seat, max, 27, 22);
      seats.append(bet);
    }
  }
  $("board").replaceChildren(...v.board.map(card));
  $("pot").textContent = n(v.pot) ? "pot " + v.pot : "";
  const pots = v.pots.map((p, i) => {
    const d = el("div", "pot " + (i ? "side-pot" : "main-pot"),
      (i ? "side pot " + i : "main pot") + ": " + p.amount);
    d.dataset.amount = String(p.amount);
    return d;
  });
  $("pots").replaceChildren(...(pots.length > 1 ? pots : []));
  $("phase").textContent = (n(v.hand_no) ? "hand " + v.hand_no + " · " : "") + v.phase_words;
}

function render(v) {
  view = v;
  felt.dataset.version = String(v.version);
  skew = n(v.server_unix_ms) - Date.now();
  $("game").textContent = [v.game.replace("_", " "), v.structure.replace("_", " "),
    "stakes " + v.stakes, v.max_seats + " seats",
    "buy-in " + v.min_buy_in + " to " + v.max_buy_in].join(" · ") +
    (v.paused ? " · paused" : v.closing ? " · closing" : "");
  renderFelt(v);
  renderActions(v);
  renderControls(v);
  if (!sitForm.hidden) renderSit(v);
  const last = $("last-hand");
  if (n(v.hand_no) > 1) {
    last.href = "/table/" + encodeURIComponent(tableId) + "/hands/" + (n(v.hand_no) - 1);
    last.textContent = "hand " + (n(v.hand_no) - 1) + ", step by step";
  }
  readLog();
  tick();
}

// --- the hand from the log: its actions and, once over, its result -------------------------

// One read at a time, again while the view is newer than what was read (after a second
// when the read was refused: over the per-visitor rate, 429).
let logVersion = -1, reading = false;
async function readLog() {
  if (reading || !view || n(view.version) <= logVersion) return;
  reading = true;
  let ok = false;
  try {
    const reply = await fetch(base + "/log", { cache: "no-store" }); // as of the server's view
    ok = reply.ok;
    if (ok) {
      const log = await reply.json();
      logVersion = n(log.version);
      renderHand(log.hand);
    }
  } finally {
    reading = false;
  }
  if (view && n(view.version) > logVersion) setTimeout(readLog, ok ? 50 : 1000);
}

function renderHand(hand) {
  $("recent-hand").textContent = hand ? "(hand " + hand.hand_no + ")" : "";
  $("recent").replaceChildren(...(hand ? hand.actions : []).map((a) => {
    const li = el("li", "", a.text);
    li.dataset.seat = String(a.seat);
    li.dataset.action = a.action;
    li.dataset.amount = String(a.action === "raise" || a.action === "complete" ? a.to
      : a.action === "uncalled_returned" ? a.amount : a.added || 0);
    return li;
  }));
  const result = hand && hand.result;
  $("result").hidden = !result;
  $("result").dataset.hand = result ? String(hand.hand_no) : "";
  if (!result) return;
  $("result-hand").textContent = String(hand.hand_no);
  $("result-board").replaceChildren(...result.board.map(card));
  $("result-shows").replaceChildren(...result.shows.map((s) => {
    const li = el("li", "", s.name + (s.mucked ? " mucks" : " shows "));
    li.dataset.seat = String(s.seat);
    if (!s.mucked) li.append(...s.cards.map(card));
    return li;
  }));
  $("result-wins").replaceChildren(...result.wins.map((w) => {
    const li = el("li", "win", w.name + " wins " + w.amount + " from the " + w.pot +
      (w.hand ? " with " + w.hand : ""));
    li.dataset.seat = String(w.seat);
    li.dataset.amount = String(w.amount);
    return li;
  }));
}

// --- the action clock: a bar and the seconds left ------------------------------------------

let clockKey = "", clockFrom = 0;
function tick() {
  if (!view) return;
  const deadline = n(view.deadline_unix_ms), now = Date.now() + skew;
  const clock = $("clock");
  if (!(view.to_act && deadline)) {
    clock.hidden = true;
    status.textContent = view.paused ? "paused" : "";
    return;
  }
  const key = view.hand_no + ":" + view.to_act + ":" + deadline;
  if (key !== clockKey) { clockKey = key; clockFrom = n(view.countdown_unix_ms) || now; }
  const left = Math.max(0, deadline - now), whole = Math.max(1, deadline - Math.min(clockFrom, now));
  const who = view.seats.find((s) => s.seat === view.to_act);
  clock.hidden = false;
  $("clock-bar").style.width = (100 * left / whole).toFixed(1) + "%";
  $("clock-text").textContent = (who ? nameOf(who) : "seat " + view.to_act) + " to act · " +
    Math.ceil(left / 1000) + " s";
  status.textContent = "";
}

// The table's live views. A dropped stream is reconnected by the browser itself; a refused
// one (429 over the live-view limits, 503) closes, so it is opened again after a wait that
// grows (at most 30 s), as the server's Retry-After asks.
let retryMs = 2000;
function follow() {
  const source = new EventSource(base + "/events");
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
