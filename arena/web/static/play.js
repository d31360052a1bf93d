/* Pool Arena play page: a person plays one seat.
 *
 * The board is the replay viewer's (viewer.js, window.poolViewer); this script adds what
 * happened since (poolViewer.extend), steps through it at a watchable pace, and offers the
 * current decision: the dice of the throw on the table to keep (only legal keeps), stop, chip,
 * and on the setup and action steps the reachable loungers, highlighted and clickable, each with
 * what it would do and score.  It applies no rule: the legal actions and what they do come from
 * the server (the bridge), and the referee judges every answer.  No undo: an answer is posted once.
 */
"use strict";
(function () {
  const cfgEl = document.getElementById("play-config");
  const V = window.poolViewer;
  if (!cfgEl || !V) return;
  const CFG = JSON.parse(cfgEl.textContent);
  let PACE = Math.max(0, Number(CFG.pace_ms) || 0); // ms each of the others' events is shown
  const FACES = ["green", "purple", "yellow", "red", "blue", "lifeguard"];
  const COLOURS = FACES.slice(0, 5);
  const $ = (id) => document.getElementById(id);
  const panel = $("play-panel");
  const prompt = $("play-prompt");
  const clock = $("play-clock");
  const diceBox = $("play-dice");
  const optBox = $("play-options");
  const msg = $("play-msg");
  const resultBox = $("play-result");
  const btn = { keep: $("btn-keep"), stop: $("btn-stop"), chip: $("btn-chip"), pass: $("btn-pass"), skip: $("btn-skip") };
  const base = `/play/${encodeURIComponent(CFG.id)}`;
  const keyQ = `key=${encodeURIComponent(CFG.key)}`;

  let known = V.steps; // events the viewer has
  let latest = null; // the latest snapshot
  let shownRequest = null; // the request id whose controls are on screen
  let selected = {}; // dice selected to keep: colour -> count
  let marked = 0; // the option marked for Enter (setup / action)
  let posting = false;
  let deadline = null; // performance.now() when the current decision's time runs out
  let animating = null;
  let finalSeen = false;
  const EV = JSON.parse(document.getElementById("replay-data").textContent).events; // event k is EV[k - 1]

  // ---------------------------------------------------------------- the event stream
  let source = null;
  let polling = null;
  function connect() {
    if (!window.EventSource) return poll();
    source = new EventSource(`${base}/events?${keyQ}&since=${known}`);
    source.onmessage = (ev) => receive(JSON.parse(ev.data));
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        source = null;
        poll();
      }
    };
  }
  function poll() {
    if (polling) return;
    polling = setInterval(() => {
      fetch(`${base}/state?${keyQ}&since=${known}`)
        .then((r) => (r.ok ? r.json() : null))
        .then((s) => s && receive(s))
        .catch(() => {});
    }, 1000);
  }

  function receive(s) {
    const skip = known - s.since; // what of it the page already has
    const states = s.states.slice(Math.max(0, skip));
    const events = s.events.slice(Math.max(0, skip));
    const final = s.final;
    let result = null;
    let forfeits = [];
    if (final && !finalSeen) {
      finalSeen = true;
      result = { termination: final.termination, scores: final.seats.map((x) => x.score), placings: final.seats.map((x) => x.placing) };
      forfeits = final.forfeits || [];
    }
    if (events.length || result) {
      events.forEach((e) => EV.push(e));
      V.extend(states, events, forfeits, result);
      known += events.length;
    }
    latest = s;
    panel.dataset.version = String(s.version);
    if (s.request && s.request.left_ms !== null && s.request.left_ms !== undefined) {
      deadline = performance.now() + s.request.left_ms;
    } else if (!s.request) {
      deadline = null;
    }
    animate();
  }

  // ---------------------------------------------------------------- stepping at a watchable pace
  function animate() {
    if (animating) return;
    const next = () => {
      animating = null;
      if (V.step < known) {
        const e = EV[V.step];
        V.go(V.step + 1);
        const own = e && e.kind === "decision" && e.seat === CFG.seat;
        const wait = own || V.step >= known ? Math.min(PACE, 120) : PACE;
        btn.skip.hidden = V.step >= known;
        panel.dataset.state = "watch";
        if (V.step < known) {
          animating = setTimeout(next, wait);
          return;
        }
      }
      btn.skip.hidden = true;
      decide();
    };
    if (V.step > known || PACE === 0) V.go(known); // (no pace: straight to the latest state)
    next();
  }
  function skipAhead() {
    if (animating) clearTimeout(animating);
    animating = null;
    V.go(known);
    btn.skip.hidden = true;
    decide();
  }

  // ---------------------------------------------------------------- the decision
  function clearTargets() {
    document.querySelectorAll("#board g.lounger.target").forEach((g) => {
      g.classList.remove("target", "marked");
      g.removeAttribute("tabindex");
      const t = g.querySelector("title.play-tip");
      if (t) t.remove();
    });
  }
  function hideControls() {
    clearTargets();
    diceBox.hidden = true;
    optBox.hidden = true;
    diceBox.innerHTML = "";
    optBox.innerHTML = "";
    for (const k of ["keep", "stop", "chip", "pass"]) btn[k].hidden = true;
  }
  function seatName(k) {
    return latest && latest.seating[k] ? `seat ${k} (${latest.seating[k]})` : `seat ${k}`;
  }

  function decide() {
    const s = latest;
    if (!s) return;
    if (s.final || (s.ended && !s.request)) return finished(s);
    if (s.result) return finished(s);
    const r = s.request;
    if (!r) {
      hideControls();
      shownRequest = null;
      panel.dataset.state = "wait";
      panel.dataset.request = "";
      panel.dataset.phase = "";
      const st = currentState();
      prompt.textContent = st && st.phase !== "over" ? `${seatName(st.seat)} is playing…` : "Waiting for the referee…";
      if (s.left) prompt.textContent = `You left the page: ${s.left}.`;
      return;
    }
    if (shownRequest === r.id) return;
    shownRequest = r.id;
    posting = false;
    selected = {};
    marked = 0;
    hideControls();
    msg.hidden = true;
    panel.dataset.state = "decide";
    panel.dataset.phase = r.phase;
    panel.dataset.request = String(r.id);
    if (V.step !== known) V.go(known); // the decision is about the latest state
    if (r.phase === "roll") return offerRoll(r);
    return offerLoungers(r);
  }

  function currentState() {
    const el = document.getElementById("board");
    return el ? { phase: el.dataset.phase, seat: Number(el.dataset.seat) } : null;
  }

  // setup and action: the loungers with a legal action, clickable, plus the list (and pass)
  function offerLoungers(r) {
    prompt.textContent = r.phase === "setup" ? "Your turn: place a towel on a highlighted lounger." : "Your turn: use a highlighted lounger, or pass.";
    const opts = r.options.filter((o) => o.lounger);
    optBox.hidden = opts.length === 0;
    opts.forEach((o, i) => {
      const b = document.createElement("button");
      b.className = "opt";
      b.dataset.action = o.action;
      b.dataset.lounger = o.lounger;
      b.dataset.gain = String(o.gain);
      const gain = o.gain > 0 ? `+${o.gain}` : String(o.gain);
      b.innerHTML = "";
      const a = document.createElement("b");
      a.textContent = o.action;
      const t = document.createElement("span");
      t.className = "what";
      t.textContent = ` ${o.text} · ${gain} pt${Math.abs(o.gain) === 1 ? "" : "s"} (you: ${o.score})`;
      b.appendChild(a);
      b.appendChild(t);
      b.addEventListener("click", () => send(o.action));
      b.addEventListener("mouseenter", () => mark(i));
      optBox.appendChild(b);
      const g = document.querySelector(`#board g.lounger[data-lounger="${o.lounger}"]`);
      if (g) {
        g.classList.add("target");
        g.setAttribute("tabindex", "0");
        g.dataset.action = o.action;
        g.dataset.gain = String(o.gain);
        const tip = document.createElementNS("http://www.w3.org/2000/svg", "title");
        tip.setAttribute("class", "play-tip");
        tip.textContent = `${o.action}: ${o.text} (${gain} points)`;
        g.appendChild(tip);
      }
    });
    btn.pass.hidden = !r.legal.includes("pass");
    mark(0);
  }
  function mark(i) {
    const items = optBox.querySelectorAll("button.opt");
    if (!items.length) return;
    marked = (i + items.length) % items.length;
    items.forEach((b, k) => b.classList.toggle("marked", k === marked));
    document.querySelectorAll("#board g.lounger.target").forEach((g) => g.classList.toggle("marked", g.dataset.lounger === items[marked].dataset.lounger));
  }
  document.getElementById("board").addEventListener("click", (ev) => {
    const g = ev.target.closest && ev.target.closest("g.lounger.target");
    if (g && panel.dataset.state === "decide") send(g.dataset.action);
  });

  // roll: the throw's dice to select (only into a legal keep), stop, chip
  function keepOf(text) {
    const out = {};
    text.slice(5).split(",").forEach((p) => {
      const [c, n] = p.split("=");
      out[c] = Number(n);
    });
    return out;
  }
  function keepText(sel) {
    const parts = COLOURS.filter((c) => sel[c]).map((c) => `${c}=${sel[c]}`);
    return parts.length ? "keep " + parts.join(",") : "";
  }
  function offerRoll(r) {
    const keeps = r.legal.filter((a) => a.startsWith("keep ")).map(keepOf);
    const canSelect = (sel) => keeps.some((k) => COLOURS.every((c) => (sel[c] || 0) <= (k[c] || 0)));
    prompt.textContent = "Your turn: select dice to keep (then Keep), or stop" + (r.legal.includes("chip") ? ", or spend a chip." : ".");
    const st = lastThrow();
    diceBox.hidden = false;
    const dice = [];
    FACES.forEach((f) => {
      for (let i = 0; i < (st[f] || 0); i++) dice.push(f);
    });
    dice.forEach((f, i) => {
      const b = document.createElement("button");
      b.className = "die-btn";
      b.dataset.face = f;
      b.dataset.index = String(i + 1);
      b.title = `${f} (key ${i + 1})`;
      b.innerHTML = `<span class="pip"></span><span class="n">${i + 1}</span>`;
      b.style.setProperty("--face", `var(--face-${f})`);
      b.addEventListener("click", () => toggle(b));
      diceBox.appendChild(b);
    });
    function refresh() {
      const text = keepText(selected);
      const ok = text && r.legal.includes(text);
      btn.keep.disabled = !ok;
      btn.keep.dataset.action = ok ? text : "";
      btn.keep.querySelector(".what").textContent = text ? text.slice(5) : "";
      diceBox.querySelectorAll("button.die-btn").forEach((b) => {
        const f = b.dataset.face;
        const on = b.classList.contains("on");
        const more = Object.assign({}, selected);
        more[f] = (more[f] || 0) + 1;
        b.disabled = !on && (f === "lifeguard" || !canSelect(more));
      });
    }
    function toggle(b) {
      const f = b.dataset.face;
      if (b.classList.contains("on")) {
        b.classList.remove("on");
        selected[f] -= 1;
      } else if (!b.disabled) {
        b.classList.add("on");
        selected[f] = (selected[f] || 0) + 1;
      }
      refresh();
    }
    diceBox.toggleDie = (n) => {
      const b = diceBox.querySelector(`button.die-btn[data-index="${n}"]`);
      if (b) toggle(b);
    };
    btn.keep.hidden = keeps.length === 0;
    btn.stop.hidden = !r.legal.includes("stop");
    btn.chip.hidden = !r.legal.includes("chip");
    refresh();
  }
  function lastThrow() {
    // the throw on the table: the dice the viewer shows in the "last" row
    const row = document.getElementById("dice-last");
    const out = {};
    (row ? row.dataset.dice : "").split(",").filter(Boolean).forEach((f) => (out[f] = (out[f] || 0) + 1));
    return out;
  }

  // ---------------------------------------------------------------- answering
  function send(action) {
    const r = latest && latest.request;
    if (!r || posting || !action || panel.dataset.state !== "decide") return;
    posting = true;
    panel.dataset.state = "sent";
    hideControls();
    prompt.textContent = `You: ${action}`;
    fetch(`${base}/action`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ key: CFG.key, seat: CFG.seat, request_id: r.id, action: action }),
    })
      .then((res) => res.json().then((body) => ({ ok: res.ok, body: body })))
      .then(({ ok, body }) => {
        if (!ok) say(`Not sent: ${body.detail || body.error}`);
      })
      .catch((err) => say(`Not sent: ${err}`));
  }
  function say(text) {
    msg.textContent = text;
    msg.hidden = false;
  }
  btn.keep.addEventListener("click", () => send(btn.keep.dataset.action));
  btn.stop.addEventListener("click", () => send("stop"));
  btn.chip.addEventListener("click", () => send("chip"));
  btn.pass.addEventListener("click", () => send("pass"));
  btn.skip.addEventListener("click", skipAhead);

  // ---------------------------------------------------------------- the end
  function finished(s) {
    hideControls();
    btn.skip.hidden = true;
    shownRequest = null;
    deadline = null;
    panel.dataset.request = "";
    const mine = s.result && s.result.seats.find((x) => x.seat === CFG.seat);
    const forfeited = mine && !["normal", "round-cap", "forfeit"].includes(mine.termination);
    if (!s.final && !forfeited && !s.ended) return;
    panel.dataset.state = "over";
    panel.dataset.termination = mine ? mine.termination : "";
    if (forfeited) prompt.textContent = `You forfeited: ${mine.termination}` + (mine.detail ? ` (${mine.detail})` : "");
    else prompt.textContent = "Game over.";
    resultBox.hidden = false;
    resultBox.innerHTML = "";
    if (s.final) {
      const ul = document.createElement("ul");
      s.final.seats.slice().sort((a, b) => a.placing - b.placing || a.seat - b.seat).forEach((x) => {
        const li = document.createElement("li");
        li.dataset.seat = String(x.seat);
        li.textContent = `place ${x.placing}: ${seatName(x.seat)} ${x.score} pts` + (x.seat === CFG.seat ? " (you)" : "") + (["normal", "round-cap", "forfeit"].includes(x.termination) ? "" : ` — forfeited: ${x.termination}`);
        ul.appendChild(li);
      });
      resultBox.appendChild(ul);
      if (s.final.replay_url) {
        const a = document.createElement("a");
        a.id = "replay-link";
        a.href = s.final.replay_url;
        a.textContent = `the replay (match ${s.final.stored})`;
        resultBox.appendChild(document.createTextNode("Stored: "));
        resultBox.appendChild(a);
      }
      panel.dataset.stored = s.final.stored === null ? "" : String(s.final.stored);
      panel.dataset.final = "1";
    } else if (s.error) {
      resultBox.textContent = s.error;
    }
  }

  // ---------------------------------------------------------------- the clock
  setInterval(() => {
    if (deadline === null || panel.dataset.state === "over") {
      clock.dataset.left = "";
      clock.classList.remove("low");
      if (latest) clock.textContent = latest.time_control;
      return;
    }
    const left = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
    clock.dataset.left = String(left);
    clock.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left`;
    clock.classList.toggle("low", left <= 10);
  }, 250);

  // ---------------------------------------------------------------- keys (before the viewer's)
  window.addEventListener(
    "keydown",
    (ev) => {
      const tag = ev.target && ev.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const k = ev.key;
      let used = true;
      if (k === "Escape" && !btn.skip.hidden) skipAhead();
      else if (panel.dataset.state !== "decide") used = false;
      else if (panel.dataset.phase === "roll") {
        if (/^[1-9]$/.test(k) && diceBox.toggleDie) diceBox.toggleDie(Number(k));
        else if (k === "Enter" && !btn.keep.disabled) send(btn.keep.dataset.action);
        else if ((k === "s" || k === "S") && !btn.stop.hidden) send("stop");
        else if ((k === "c" || k === "C") && !btn.chip.hidden) send("chip");
        else used = false;
      } else {
        const items = optBox.querySelectorAll("button.opt");
        if (k === "ArrowRight" || k === "ArrowDown") mark(marked + 1);
        else if (k === "ArrowLeft" || k === "ArrowUp") mark(marked - 1);
        else if (k === "Enter" && items.length) send(items[marked].dataset.action);
        else if ((k === "p" || k === "P") && !btn.pass.hidden) send("pass");
        else used = false;
      }
      if (used) {
        ev.preventDefault();
        ev.stopImmediatePropagation();
      }
    },
    true,
  );

  // a small handle for the console and for tests
  window.poolPlay = {
    get pace() {
      return PACE;
    },
    set pace(ms) {
      PACE = Math.max(0, Number(ms) || 0);
    },
  };
  V.go(known);
  connect();
  panel.dataset.ready = "1";
})();
