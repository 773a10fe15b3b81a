// bookdup review page: search with collapsed results, a book's related books grouped by
// class, and the explain view of a pair with its picture. No framework, no build step; every
// value from the API is inserted as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

function status(text, isError) {
  $("status").textContent = text || "";
  $("status").className = isError ? "error" : "";
}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function show(section) {
  for (const id of ["results", "book", "pair"]) $(id).hidden = id !== section;
}

function go(hash) { location.hash = hash; }

function enc(s) { return encodeURIComponent(s); }

// --- search --------------------------------------------------------------------------------

async function runSearch(q, collapse, page) {
  $("q").value = q;
  $("collapse").value = collapse;
  status("searching …");
  let r;
  try {
    r = await api(`/api/search?q=${enc(q)}&collapse=${enc(collapse)}&page=${page}`);
  } catch (e) { status(e.message, true); show(null); return; }
  show("results");
  const unit = collapse === "none" ? "books" : `${collapse} clusters`;
  $("results-title").textContent =
    `${r.total_groups} ${unit} (${r.total_books} matching books) for “${r.query}”`;
  status(r.total_books === 0 ? `No book matches “${r.query}”.` : "");
  const hits = $("hits");
  hits.replaceChildren();
  hits.start = (r.page - 1) * r.per_page + 1;
  for (const h of r.hits) hits.append(hitItem(h, collapse));
  pager(r, q, collapse);
}

function hitItem(h, collapse) {
  const counts = [];
  counts.push(el("span", { class: "count", text: `${h.edition_count} edition${h.edition_count === 1 ? "" : "s"}` }));
  if (h.translation_count) counts.push(el("span", { class: "count", text: `${h.translation_count} in other languages` }));
  const link = el("button", { class: "link hit-title", "data-book": h.book_id, onclick: () => go(`book/${enc(h.book_id)}`) }, h.display_title);
  const meta = el("div", { class: "meta" },
    `${h.author || "unknown author"} · ${h.language || "?"}${h.year ? " · " + h.year : ""} · ${h.book_id}`);
  const item = el("li", { class: "hit" }, link, ...counts, meta);
  if (collapse !== "none" && h.members && h.members.length > 1) {
    const others = h.members.filter((m) => m.book_id !== h.book_id)
      .map((m) => `${m.book_id} (${m.language})`).join(", ");
    item.append(el("div", { class: "meta", text: `also matching in this cluster: ${others}` }));
  }
  return item;
}

function pager(r, q, collapse) {
  const nav = $("pager");
  nav.replaceChildren();
  if (r.pages <= 1) return;
  if (r.page > 1) nav.append(el("button", { onclick: () => go(`search?q=${enc(q)}&collapse=${collapse}&page=${r.page - 1}`) }, "‹ previous"));
  nav.append(el("span", { class: "meta", text: ` page ${r.page} of ${r.pages} ` }));
  if (r.page < r.pages) nav.append(el("button", { onclick: () => go(`search?q=${enc(q)}&collapse=${collapse}&page=${r.page + 1}`) }, "next ›"));
}

// --- a book's related books -------------------------------------------------------------------

async function showBook(id) {
  status("loading …");
  let r;
  try { r = await api(`/api/books/${enc(id)}/related`); } catch (e) { status(e.message, true); show(null); return; }
  status("");
  show("book");
  const b = r.book;
  $("book-title").textContent = b.display_title;
  $("book-meta").textContent =
    `${b.book_id} · ${b.author || "unknown author"} · ${b.language} · ${b.n_pages} pages · edition cluster ${b.edition_cluster} · work cluster ${b.work_cluster}`;
  const box = $("groups");
  box.replaceChildren();
  if (!r.groups.length) box.append(el("p", { text: "No related book found: no other edition, part or translation of this text is indexed." }));
  for (const g of r.groups) box.append(groupTable(b.book_id, g));
}

function groupTable(thisId, g) {
  const rows = g.books.map((r) => el("tr", { class: "relation", "data-book": r.book_id },
    el("td", {}, el("button", { class: "link", onclick: () => go(`book/${enc(r.book_id)}`) }, r.display_title), el("div", { class: "meta", text: r.book_id })),
    el("td", { text: r.language || "" }),
    el("td", { text: r.direction_text || "" }),
    el("td", { class: "num", text: r.confidence.toFixed(2) }),
    el("td", { class: "num", text: r.its.toFixed(3) }),
    el("td", { text: r.page_mapping ? r.page_mapping.text : "" }),
    el("td", {}, el("button", { class: "link explain", onclick: () => go(`pair/${enc(thisId)}/${enc(r.book_id)}`) }, "why?"))));
  const head = el("tr", {}, ...["book", "language", "direction", "confidence", "its", "pages", ""].map((t) => el("th", { text: t })));
  return el("div", { class: "group", "data-relation": g.relation },
    el("h3", { text: `${g.label} (${g.relation}, ${g.books.length})` }),
    el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows)));
}

// Directions are worded by the server (bookdup.vocabulary): `direction_text` on each relation.

// --- a pair ----------------------------------------------------------------------------------

async function showPair(a, b) {
  status("comparing …");
  let e;
  try { e = await api(`/api/explain?a=${enc(a)}&b=${enc(b)}`); } catch (err) { status(err.message, true); show(null); return; }
  status("");
  show("pair");
  $("pair-title").textContent = `A: ${e.a.display_title} — B: ${e.b.display_title}`;
  $("verdict").textContent = `${e.relation} (confidence ${e.confidence.toFixed(2)}): ${e.verdict}`;
  const base = `/api/explain/plot?a=${enc(a)}&b=${enc(b)}`;
  $("plot").src = `${base}&format=png`;
  $("plot-png").href = `${base}&format=png`;
  $("plot-svg").href = `${base}&format=svg`;
  $("decision").replaceChildren(...e.decision.map((s) => el("li", { text: s })));
  const conf = Object.entries(e.confidences).sort((x, y) => y[1] - x[1]);
  $("confidences").tBodies[0].replaceChildren(...conf.map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { class: "num", text: v.toFixed(3) }))));
  // plain names from the API (bookdup/vocabulary.py, the words `bookdup compare` prints); the raw key on hover
  const sig = Object.entries(e.signals || {}).filter(([, v]) => v !== null);
  const label = (k) => (e.signal_labels || {})[k] || k;
  $("signals").tBodies[0].replaceChildren(...sig.map(([k, v]) => el("tr", {}, el("td", { text: label(k), title: k }), el("td", { class: "num", text: String(v) }))));
  glosses(e);
}

function glosses(e) {
  const box = $("glosses");
  box.replaceChildren();
  const translated = Boolean(e.dictionary);
  $("glosses-box").hidden = !translated;
  if (!translated) return;
  for (const [src, dst] of e.alignment.words.slice(0, 400)) {
    box.append(el("span", { title: `${src} → ${dst} (${e.dictionary})`, text: src }));
  }
}

// --- routing ---------------------------------------------------------------------------------

function route() {
  const hash = decodeURIComponent(location.hash.slice(1));
  const raw = location.hash.slice(1);
  if (raw.startsWith("search?")) {
    const p = new URLSearchParams(raw.slice(7));
    runSearch(p.get("q") || "", p.get("collapse") || "edition", Number(p.get("page") || 1));
  } else if (raw.startsWith("book/")) {
    showBook(decodeURIComponent(raw.slice(5)));
  } else if (raw.startsWith("pair/")) {
    const [a, b] = raw.slice(5).split("/").map(decodeURIComponent);
    showPair(a, b);
  } else if (!hash) {
    show(null);
    status("Search the catalog: one hit per edition cluster.");
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    go(`search?q=${enc($("q").value)}&collapse=${enc($("collapse").value)}&page=1`);
  });
  window.addEventListener("hashchange", route);
  route();
});
