/* Pool Arena: the analysis of a match on its page.
 *
 * The "Analyse" button asks the server (POST /matches/{id}/analysis) to value every decision of
 * the match with the learned evaluation, then polls GET /matches/{id}/analysis until it is done.
 * It draws, per seat, the cumulative expected points lost over the game (SVG) and marks each
 * seat's costliest decisions; clicking a mark (or its line in the list) moves the replay viewer
 * to that decision (window.poolViewer.go, from viewer.js).  An analysis already computed is shown
 * as soon as the page opens.
 */
"use strict";
(function () {
  const root = document.getElementById("analysis");
  if (!root) return;
  const NS = "http://www.w3.org/2000/svg";
  const matchId = root.dataset.match;
  const url = "/matches/" + matchId + "/analysis";
  const button = document.getElementById("btn-analyse");
  const statusEl = document.getElementById("analysis-status");
  const body = document.getElementById("analysis-body");
  const graph = document.getElementById("analysis-graph");
  const list = document.getElementById("analysis-costly");
  const css = getComputedStyle(document.documentElement);
  const SEAT = [0, 1, 2, 3].map(
    (k) => css.getPropertyValue("--seat" + k).trim() || ["#f76707", "#343a40", "#f8f9fa", "#d6336c"][k]
  );
  let polling = null;

  function setStatus(status, text) {
    root.dataset.status = status;
    statusEl.textContent = text;
  }

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function jump(step) {
    if (window.poolViewer) {
      window.poolViewer.play(false);
      window.poolViewer.go(step);
    }
    root.dataset.jumped = String(step);
  }

  function draw(a) {
    const W = 900, H = 260, L = 48, R = 150, T = 14, B = 34;
    const pw = W - L - R, ph = H - T - B;
    const steps = Math.max(1, a.steps);
    let top = 0.5;
    a.seats.forEach((s) => { top = Math.max(top, s.total_loss); });
    top *= 1.08;
    const x = (k) => L + (pw * k) / steps;
    const y = (v) => T + ph * (1 - v / top);
    graph.textContent = "";
    const svg = el("svg", { id: "loss-graph", viewBox: `0 0 ${W} ${H}`, role: "img",
      "aria-label": "expected points lost per seat over the game" }, graph);
    svg.style.width = "100%";
    svg.style.maxWidth = W + "px";
    el("rect", { x: L, y: T, width: pw, height: ph, fill: "#fbfbfb", stroke: "#ccc" }, svg);
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      el("line", { x1: L, x2: L + pw, y1: y(v), y2: y(v), stroke: "#eee" }, svg);
      el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11 }, svg).textContent = v.toFixed(1);
      const k = Math.round((steps * i) / 4);
      el("text", { x: x(k), y: T + ph + 14, "text-anchor": "middle", "font-size": 11 }, svg).textContent = String(k);
    }
    el("text", { x: L + pw / 2, y: H - 4, "text-anchor": "middle", "font-size": 11 }, svg).textContent = "step";
    // the seats' labels at the right end, at least 14 px apart
    const labelY = {};
    a.seats.slice().sort((p, q) => q.total_loss - p.total_loss).forEach((s, i, arr) => {
      let ly = y(s.total_loss);
      if (i > 0) ly = Math.max(ly, labelY[arr[i - 1].seat] + 14);
      labelY[s.seat] = ly;
    });
    const byStep = {};
    a.decisions.forEach((d) => { byStep[d.step] = d; });
    a.seats.forEach((s) => {
      const pts = [[0, 0]].concat(s.curve);
      pts.push([steps, s.total_loss]);
      const path = pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
      el("polyline", { points: path, fill: "none", stroke: "#000", "stroke-width": 3.5, opacity: 0.35 }, svg);
      const line = el("polyline", { class: "loss-line", points: path, fill: "none", stroke: SEAT[s.seat % 4],
        "stroke-width": 2, "data-seat": s.seat }, svg);
      line.appendChild(document.createElementNS(NS, "title")).textContent =
        `${s.name} (seat ${s.seat}): ${s.total_loss.toFixed(2)} expected points lost in ${s.decisions} decisions`;
      el("text", { x: L + pw + 8, y: labelY[s.seat] + 4, "font-size": 12, class: "loss-label", "data-seat": s.seat }, svg)
        .textContent = `${s.name}: ${s.total_loss.toFixed(1)}`;
      const cum = {};
      s.curve.forEach((p) => { cum[p[0]] = p[1]; });
      s.costliest.forEach((step) => {
        const d = byStep[step];
        const mark = el("circle", { class: "costly", cx: x(step), cy: y(cum[step]), r: 6, fill: SEAT[s.seat % 4],
          stroke: "#c92a2a", "stroke-width": 2.5, "data-step": step, "data-seat": s.seat, tabindex: 0 }, svg);
        mark.style.cursor = "pointer";
        mark.appendChild(document.createElementNS(NS, "title")).textContent =
          `step ${step}: ${d.chosen} (best ${d.best}) lost ${d.loss.toFixed(2)}`;
        mark.addEventListener("click", () => jump(step));
        mark.addEventListener("keydown", (ev) => { if (ev.key === "Enter") jump(step); });
      });
    });
    list.textContent = "";
    const marked = a.decisions.filter((d) => d.costly).sort((p, q) => q.loss - p.loss);
    marked.forEach((d) => {
      const li = document.createElement("li");
      li.className = "costly-item";
      li.dataset.step = String(d.step);
      li.dataset.seat = String(d.seat);
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = `step ${d.step}`;
      b.addEventListener("click", () => jump(d.step));
      li.appendChild(b);
      const name = a.seats[d.seat].name;
      const best = d.best === d.chosen ? "" : `; best ${d.best} (${d.best_value.toFixed(2)})`;
      li.appendChild(document.createTextNode(
        ` ${name}, turn ${d.turn}, ${d.phase}: ${d.chosen} (${d.chosen_value.toFixed(2)})${best} — lost ${d.loss.toFixed(2)} points`));
      list.appendChild(li);
    });
    body.hidden = false;
    const n = a.decisions.length;
    setStatus("done", `${n} decisions valued by ${a.evaluator}`);
    button.disabled = false;
    button.textContent = "Analysed";
  }

  function handle(res) {
    if (res.status === "done") {
      stop();
      draw(res.analysis);
    } else if (res.status === "running") {
      setStatus("running", "analysing every decision…");
      button.disabled = true;
      if (!polling) polling = setInterval(poll, 700);
    } else if (res.status === 503) {
      stop();
      setStatus("error", "not started: " + res.detail);
      button.disabled = false;
    } else if (res.status === "error" || res.error) {
      stop();
      setStatus("error", "analysis failed: " + (res.detail || res.error));
      button.disabled = false;
    } else {
      setStatus("none", "");
    }
  }

  function stop() {
    if (polling) clearInterval(polling);
    polling = null;
  }

  function request(method) {
    return fetch(url, { method: method, headers: { Accept: "application/json" } })
      .then((r) => r.json())
      .then(handle)
      .catch((err) => {
        stop();
        setStatus("error", "analysis failed: " + err);
        button.disabled = false;
      });
  }

  function poll() {
    request("GET");
  }

  button.addEventListener("click", () => {
    button.disabled = true;
    setStatus("running", "analysing every decision…");
    request("POST");
  });
  request("GET"); // shown at once when it was computed before
})();
