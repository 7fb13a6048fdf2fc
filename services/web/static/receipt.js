// The hand page's "verify this hand" (a signed-in player who played it): fetches the player's
// receipt (/api/tables/T/hands/N/receipt), checks in the page every card's RFC 6962 inclusion
// proof to its deck's positions root, those roots in the hand's leaf and the leaf's inclusion
// in the checkpoint's tree (SHA-256 by WebCrypto), and offers the file for `pokerctl receipt
// verify FILE`, which also checks the checkpoint's signature with the notary's key.
"use strict";
// the checks, apart from the page (tests/unit/test_receipt_js.py runs them under node)
const receiptCheck = (() => {
  const hex = (s) => Uint8Array.from(s.match(/../g) || [], (b) => parseInt(b, 16));
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const sha = async (...parts) => {
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  };
  const text = (s) => new TextEncoder().encode(s);
  const leafHash = (bytes) => sha(Uint8Array.of(0), bytes);

  // RFC 9162 §2.1.3.2, as shared/tlog/merkle.py verify_inclusion
  async function included(leaf, index, size, proof, root) {
    if (index < 0 || index >= size) return false;
    let fn = index, sn = size - 1, r = leaf;
    for (const p of proof) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        r = await sha(Uint8Array.of(1), p, r);
        if (fn % 2 === 0) while (fn && fn % 2 === 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      } else {
        r = await sha(Uint8Array.of(1), r, p);
      }
      fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
    }
    return sn === 0 && same(r, root);
  }

  async function check(receipt) {
    const roots = receipt.leaf.split("\n").filter((l) => l.startsWith("cards ")).map((l) => hex(l.slice(6)));
    if (!roots.length) return "the hand's leaf names no positions root";
    if (!receipt.leaf.includes(`\ntable ${receipt.table}\nhand ${receipt.hand}\n`)) return "the leaf is another hand's";
    for (const c of receipt.cards) {
      const leaf = await leafHash(text(`poker-deck-position/v1\n${c.position} ${c.card} ${c.salt}\n`));
      if (!roots[c.deck] || !await included(leaf, c.position, receipt.deck_sizes[c.deck], c.proof.map(hex), roots[c.deck]))
        return `${c.card} is not position ${c.position} of the committed deck`;
    }
    const [, size, root] = receipt.checkpoint.split("\n");
    const rootBytes = Uint8Array.from(atob(root), (ch) => ch.charCodeAt(0));
    if (!await included(await leafHash(text(receipt.leaf)), receipt.leaf_index, Number(size),
                        receipt.leaf_proof.map(hex), rootBytes))
      return "the hand's leaf is not in the checkpoint's tree";
    return null;
  }

  return { check };
})();
if (typeof module !== "undefined") module.exports = receiptCheck;

if (typeof document !== "undefined") (() => {
  const where = location.pathname.match(/^\/table\/([^/]+)\/hands\/(\d+)$/);
  if (!where) return;
  const url = `/api/tables/${where[1]}/hands/${where[2]}/receipt`;
  const box = document.createElement("section");
  box.id = "receipt";
  box.innerHTML = '<button id=verify-hand type=button hidden>verify this hand</button>' +
    '<p id=receipt-verdict role=status></p><ul id=receipt-cards></ul>';
  document.body.appendChild(box);
  const button = box.querySelector("#verify-hand");
  const verdict = box.querySelector("#receipt-verdict");
  fetch("/api/session").then((r) => r.json()).then((s) => { button.hidden = !s.subject; });

  button.onclick = async () => {
    verdict.textContent = "fetching your receipt...";
    const reply = await fetch(url);
    const body = await reply.text();
    if (!reply.ok) { verdict.textContent = JSON.parse(body).error; return; }
    const receipt = JSON.parse(body);
    const failed = await receiptCheck.check(receipt);
    const list = box.querySelector("#receipt-cards");
    list.replaceChildren(...receipt.cards.map((c) => {
      const li = document.createElement("li");
      li.textContent = `${c.card} (${c.seen}): position ${c.position} of deck ${c.deck}`;
      return li;
    }));
    verdict.textContent = failed ? "does NOT verify: " + failed :
      `every card you saw was in the deck committed before the deal, and the hand is leaf ` +
      `${receipt.leaf_index} of the signed checkpoint (size ${receipt.checkpoint.split("\n")[1]}). ` +
      "Check its signature offline: pokerctl receipt verify FILE ";
    const save = document.createElement("a");
    save.href = URL.createObjectURL(new Blob([body], { type: "application/json" }));
    save.download = `${receipt.table}-${receipt.hand}-receipt.json`;
    save.textContent = "(the file)";
    verdict.appendChild(save);
  };
})();
