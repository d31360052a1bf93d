/* The ladder page: every 2 s, the standings and the matches in progress from /api/ladder,
 * redrawn in place (no reload).  #ladder gets data-updates (how many times it was redrawn). */
"use strict";
(function () {
  const root = document.getElementById("ladder");
  if (!root) return;
  const rowsEl = document.getElementById("ladder-rows");
  const runEl = document.getElementById("ladder-running");
  const summary = document.getElementById("ladder-summary");
  let updates = 0;
  function cell(tr, text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function fmt(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d); }
  /* The note on the Plackett-Luce column: the same words as the page's template. */
  function fitNote(data) {
    const f = data.fit;
    if (data.ladder === null || !f || f.current) return "";
    const asOf = f.matches ? `it is as of ${f.matches} matches (${data.finished} finished now)` : "it is not fitted yet";
    const when = f.ladder_running
      ? "will be refitted shortly (the ladder is running)"
      : "will be refitted when the ladder runs again";
    return `: ${asOf} and ${when}`;
  }
  function draw(data) {
    document.getElementById("ladder-none").hidden = data.ladder !== null;
    summary.textContent = data.ladder === null ? "" : `${data.finished} matches played`;
    const note = document.getElementById("fit-note");
    if (note) note.textContent = fitNote(data);
    runEl.innerHTML = "";
    if (!data.running.length) {
      const li = document.createElement("li");
      li.className = "muted";
      li.textContent = "none right now";
      runEl.appendChild(li);
    }
    data.running.forEach((m) => {
      const li = document.createElement("li");
      li.dataset.match = String(m.match);
      const a = document.createElement("a");
      a.href = m.url;
      a.textContent = `match ${m.match}`;
      li.appendChild(a);
      li.appendChild(document.createTextNode(`: ${m.bots.join(" · ")} `));
      const badge = document.createElement("span");
      badge.className = "badge live-badge";
      badge.textContent = "live";
      li.appendChild(badge);
      runEl.appendChild(li);
    });
    rowsEl.innerHTML = "";
    data.rows.forEach((r) => {
      const tr = document.createElement("tr");
      tr.dataset.version = String(r.version_id);
      if (r.rank === null) tr.className = "provisional";
      cell(tr, r.rank === null ? "–" : String(r.rank));
      const name = cell(tr, "");
      const a = document.createElement("a");
      a.href = `/bots/${encodeURIComponent(r.bot)}/charts`;
      a.textContent = r.bot;
      name.appendChild(a);
      if (!r.active) name.appendChild(document.createTextNode(" (retired)"));
      if (r.rank === null) name.appendChild(document.createTextNode(" provisional"));
      cell(tr, fmt(r.conservative, 2), "num");
      cell(tr, fmt(r.mu, 2), "num");
      cell(tr, fmt(r.sigma, 2), "num");
      cell(tr, String(r.games), "num");
      const interval = r.pl && r.pl[1] !== null ? ` ${fmt(r.pl[1], 0)}–${fmt(r.pl[2], 0)}` : r.rank !== null ? " not measurable" : "";
      cell(tr, r.pl ? fmt(r.pl[0], 0) + interval : "–", "num");
      rowsEl.appendChild(tr);
    });
    updates += 1;
    root.dataset.updates = String(updates);
  }
  async function tick() {
    try {
      const res = await fetch(root.dataset.api, { cache: "no-store" });
      if (res.ok) draw(await res.json());
    } catch (err) {
      /* the server is restarting: try again at the next tick */
    }
    setTimeout(tick, 2000);
  }
  setTimeout(tick, 2000);
})();
