// A hand that is over, step by step, from its JSON (shared/history/render.to_json).
"use strict";
const felt = document.getElementById("felt");

// card(code): cards.js

// The hand as a list of states, each with the line that led to it. The chips in the middle
// and in front of the seats at each step are the server's (h.steps: the core's fold of the
// hand, shared/history/pots.py); the stacks follow the amounts the hand's JSON gives.
function steps(h) {
  const seats = new Map(h.players.map((p) => [p.seat, {
    seat: p.seat, name: p.name, stack: p.stack, bet: 0, cards: [], folded: false }]));
  let board = [];
  const out = [];
  const snap = (line) => {
    const chips = h.steps[out.length];
    out.push({ line, board: [...board], pot: chips.pot,
      seats: [...seats.values()].map((s) => ({ ...s, bet: chips.bets[s.seat] || 0,
                                               cards: [...s.cards] })) });
  };
  snap("the players take their seats; the button is seat " + h.button);
  for (const f of h.forced_bets) {
    seats.get(f.seat).stack -= f.amount;
    snap(f.name + " posts " + f.kind.replace("_", " ") + " " + f.amount);
  }
  h.streets.forEach((st) => {
    board = [...board, ...st.board]; // each street's JSON holds the cards it dealt
    for (const d of st.hole) seats.get(d.seat).cards.push(...d.cards);
    snap("dealing " + st.name);
    for (const a of st.actions) {
      const s = seats.get(a.seat);
      if (a.action === "uncalled_returned") {
        s.stack += a.amount;
        snap("uncalled bet (" + a.amount + ") returned to " + a.name);
        continue;
      }
      if (a.action === "fold" || a.action === "timed_out") s.folded = true;
      if (a.added) s.stack -= a.added;
      snap(a.name + " " + a.action.replace("_", " ") + (a.added ? " " + a.added : "") +
           (a.all_in ? " and is all in" : ""));
    }
  });
  board = h.board;
  for (const sh of h.shows) {
    const s = seats.get(sh.seat);
    if (sh.mucked) { snap(sh.name + " mucks"); continue; }
    s.cards = sh.cards;
    snap(sh.name + " shows " + sh.cards.join(" "));
  }
  for (const a of h.awards) {
    for (const share of a.shares) {
      seats.get(share.seat).stack += share.amount;
      snap(share.name + " wins " + share.amount + (a.hand ? " with " + a.hand : ""));
    }
  }
  if (h.rake) snap("the house takes " + h.rake + " in rake");
  return out;
}

function render(step, i, n) {
  document.getElementById("board").replaceChildren(...step.board.map(card));
  document.getElementById("pot").textContent = "pot " + step.pot;
  const seats = document.getElementById("seats");
  seats.replaceChildren();
  for (const s of step.seats) {
    const div = document.createElement("div");
    div.className = "seat" + (s.folded ? " folded" : "");
    div.dataset.seat = String(s.seat);
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = s.seat + ": " + s.name;
    const chips = document.createElement("div");
    chips.className = "chips";
    chips.textContent = "stack " + s.stack + (s.bet ? " · bet " + s.bet : "");
    const cards = document.createElement("div");
    cards.className = "cards";
    cards.replaceChildren(...s.cards.map(card));
    div.append(name, chips, cards);
    seats.appendChild(div);
  }
  document.getElementById("step").textContent = step.line;
  document.getElementById("where").textContent = "step " + (i + 1) + " of " + n;
}

// The compliance replay's proof: the audit verdict, each deck commitment against its reveal,
// and the hand's commits, one row each (shared/audit/evidence.py makes them).
function cell(text, title) {
  const td = document.createElement("td");
  td.textContent = text;
  if (title) td.title = title;
  return td;
}

// An event with its amounts, as one line: "action_taken seat 2 raise to 20 (+10)".
function eventLine(e) {
  const skip = new Set(["type", "decks", "salts", "missed_big_blind", "missed_small_blind"]);
  const parts = [e.type];
  for (const [k, v] of Object.entries(e)) {
    if (skip.has(k) || v === "" || v === false || (Array.isArray(v) && !v.length)) continue;
    parts.push(k + " " + (typeof v === "object" ? JSON.stringify(v) : String(v)));
  }
  if (e.type === "deck_revealed") parts.push(e.decks.length + " deck(s) and salt(s)");
  return parts.join(" ");
}

function decider(a) {
  if (a.kind === "player") return "player " + a.name + (a.seat ? " (seat " + a.seat + ")" : "");
  if (a.kind === "client") return "client " + a.name + " (via " + a.service + ")";
  return "service " + a.name + (a.step ? " (" + a.step + ")" : "");
}

function renderProof(data) {
  const verdict = document.getElementById("verdict");
  const h = data.audit.hands_opened || [];
  const opened = h.length > 2 && h[h.length - 1] - h[0] === h.length - 1
    ? h[0] + "–" + h[h.length - 1] : h.join(", ");
  verdict.textContent = data.audit.ok ? "audit: the table's log passes (audited from its " +
    "start to the end of this hand, the cards of hands " + opened + " opened; its hash " +
    "chain holds to the end)"
    : "audit: FAILED: " + data.audit.failure;
  verdict.dataset.ok = String(data.audit.ok);
  const hv = data.hand_audit;
  const handVerdict = document.getElementById("hand-verdict");
  handVerdict.dataset.ok = String(hv.ok);
  handVerdict.textContent = hv.ok ? "this hand, audited from its commits alone (as the " +
    "evidence file is checked): " + hv.commits + " commits, " + hv.cards + " cards checked " +
    "against " + hv.decks + " revealed deck(s)" : "this hand: FAILED: " + hv.failure;
  const decks = document.getElementById("decks");
  decks.replaceChildren(...data.decks.map((d) => {
    const li = document.createElement("li");
    li.dataset.verified = String(d.verified);
    li.textContent = "deck commitment " + d.commitment + ": " + (d.verified
      ? "verified: SHA-256 of the revealed salt " + d.salt + " and deck " + d.deck.join(" ") +
        " is " + d.recomputed
      : "NOT verified" + (d.recomputed ? " (the reveal hashes to " + d.recomputed + ")" : ""));
    return li;
  }));
  const body = document.querySelector("#chain tbody");
  body.replaceChildren(...data.commits.map((c) => {
    const tr = document.createElement("tr");
    tr.dataset.seq = String(c.seq);
    tr.dataset.linkOk = String(c.links);
    tr.append(cell(String(c.seq)), cell(c.time || ""),
      cell(c.actor ? decider(c.actor) : "", c.command_id),
      cell(c.unreadable || c.events.map(eventLine).join("; ")),
      cell((c.prev_hash || "").slice(0, 16) + "…", c.prev_hash),
      cell((c.hash || "").slice(0, 16) + "…", c.hash),
      cell(c.links ? "holds" : "BROKEN"));
    tr.children[4].className = tr.children[5].className = "hash";
    return tr;
  }));
}

fetch(felt.dataset.hand).then(async (r) => {
  const data = await r.json();
  if (!r.ok) {
    (document.getElementById("error") || document.getElementById("step")).textContent =
      data.error;
    return;
  }
  if (data.audit) renderProof(data);
  const hand = data.audit ? data.hand : data;
  if (!hand) return;
  const all = steps(hand);
  let at = 0;
  const show = () => render(all[at], at, all.length);
  document.getElementById("prev").onclick = () => { if (at > 0) { at--; show(); } };
  document.getElementById("next").onclick = () => { if (at < all.length - 1) { at++; show(); } };
  show();
});
