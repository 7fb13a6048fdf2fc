// Signing in and out, on the lobby and the table pages: the platform's token, kept by the web
// service in this browser's session (never in the page); `session` is what the web says of it.
"use strict";
const who = document.getElementById("who");
const signOut = document.getElementById("signout");

function signedIn(s) {
  who.textContent = s.subject ? "signed in as " + (s.name || s.subject) : "";
  signOut.hidden = !s.subject;
}

const session = fetch("/api/session").then((r) => r.json()).then((s) => { signedIn(s); return s; });

document.getElementById("signin").onsubmit = async (e) => {
  e.preventDefault();
  const reply = await fetch("/api/session", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: document.getElementById("token").value.trim() }) });
  const body = await reply.json();
  if (!reply.ok) { who.textContent = body.error; return; }
  signedIn(body);
  if (document.getElementById("felt")) location.reload(); // a table page: follow as the player
};

signOut.onclick = async () => {
  const reply = await fetch("/api/session", { method: "DELETE" });
  signedIn({ subject: null });
  if (!reply.ok) who.textContent = (await reply.json()).error;
  if (document.getElementById("felt")) location.reload();
};
