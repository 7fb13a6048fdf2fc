// The cards, drawn by the app (/cards/CODE.svg): shared by the table and hand pages.
"use strict";
function card(code) {
  const img = document.createElement("img");
  img.className = "card";
  img.src = "/cards/" + encodeURIComponent(code) + ".svg";
  img.alt = code;
  img.dataset.card = code;
  return img;
}
