/* Pool Arena replay viewer.
 *
 * Draws the board as SVG and steps through a replay.  It applies no rule of the game: every
 * state it shows was computed by the engine on the server (arena.engine.replay + to_snapshot)
 * and shipped as JSON in <script id="replay-data">.  Works the same in the self-contained
 * export (no server at all).
 */
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const dataEl = document.getElementById("replay-data");
  const root = document.getElementById("viewer");
  if (!dataEl || !root) return;
  const DATA = JSON.parse(dataEl.textContent);
  const STATES = DATA.states;
  const EVENTS = DATA.events;
  const BOARD = DATA.board;
  let N = EVENTS.length; // grows when a live page adds events (poolViewer.extend)
  const SEATING = DATA.seating;
  const FORFEITS = DATA.forfeits || [];
  // The rules the game was played under (standard or a variant): R25's threshold comes from here.
  const GAME_RULES = DATA.rules || { version: "1", variant: "standard", end_unoccupied: 4, round_cap: 100 };
  const VARIANT = GAME_RULES.variant === "standard" ? "" : `${GAME_RULES.variant} rules`;

  const css = getComputedStyle(document.documentElement);
  const SEAT = [0, 1, 2, 3].map((k) => css.getPropertyValue("--seat" + k).trim() || ["#f76707", "#343a40", "#f8f9fa", "#d6336c"][k]);
  const SEAT_INK = [0, 1, 2, 3].map((k) => css.getPropertyValue("--seat" + k + "-ink").trim() || "#000");
  const FACE = {
    green: "#2f9e44", purple: "#9c36b5", yellow: "#f5c000", red: "#e03131", blue: "#1c7ed6", lifeguard: "#ffffff",
  };
  const PALE = { green: "#d3f9d8", purple: "#f3d9fa", yellow: "#fff3bf", red: "#ffe3e3", blue: "#d0ebff" };
  const FACE_ORDER = BOARD.faces;

  // ---------------------------------------------------------------- geometry
  const LW = 70, LH = 104; // lounger size
  const ROW_Y = { 4: 262, 3: 384, 2: 506 };
  const X0 = 144, IN_GAP = 8, ZONE_GAP = 22;
  const LEFT_X = 66, RIGHT_X = 894, BOTTOM_Y = 662, LOOP_TOP = 244;
  const POOL = { x: 160, y: 16, w: 640, h: 112 };
  const FIVE_Y = 140, FIVE_H = 94, FIVE_X = { "five-1": 372, "five-2": 518 };
  const DIVE = { x: 894, y: 84 }; // the lifeguard's spot on the diving board

  const zoneX = []; // [{colour, x, w}]
  const loungerPos = {}; // name -> {x, y, w, h}
  (function layout() {
    let x = X0;
    BOARD.zones.forEach((z, i) => {
      const w = z.width * LW + (z.width - 1) * IN_GAP;
      zoneX.push({ colour: z.colour, x: x, w: w });
      x += w + (i < BOARD.zones.length - 1 ? ZONE_GAP : 0);
    });
    BOARD.loungers.forEach((lo) => {
      if (lo.colour === null) {
        loungerPos[lo.name] = { x: FIVE_X[lo.name], y: FIVE_Y, w: LW, h: FIVE_H };
        return;
      }
      const zone = zoneX.find((z) => z.colour === lo.colour);
      const k = lo.name.endsWith("b") ? 1 : 0;
      loungerPos[lo.name] = { x: zone.x + k * (LW + IN_GAP), y: ROW_Y[lo.value], w: LW, h: LH };
    });
  })();

  function trackPos(field) {
    if (field.name === "diving-board") return { x: DIVE.x, y: DIVE.y };
    if (field.row !== null) {
      const y = ROW_Y[field.row] + LH / 2;
      return { x: field.name.endsWith("left") ? LEFT_X : RIGHT_X, y: y };
    }
    const z = zoneX.find((zz) => zz.colour === field.colour);
    return { x: z.x + z.w / 2, y: BOTTOM_Y };
  }

  // ---------------------------------------------------------------- svg helpers
  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function txt(x, y, s, attrs, parent) {
    const t = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function starPath(R, r) {
    let d = "";
    for (let i = 0; i < 10; i++) {
      const a = -Math.PI / 2 + (i * Math.PI) / 5, rad = i % 2 ? r : R;
      d += (i ? "L" : "M") + (rad * Math.cos(a)).toFixed(2) + " " + (rad * Math.sin(a)).toFixed(2);
    }
    return d + "Z";
  }
  function show(e, on) {
    if (on) e.removeAttribute("display");
    else e.setAttribute("display", "none");
  }

  const svg = document.getElementById("board");
  svg.setAttribute("viewBox", "0 0 1300 780");
  // Narrow screens stack the side panel under the deck and draw larger text (see layout()).
  const NARROW = window.matchMedia ? window.matchMedia("(max-width: 760px)") : null;
  const defs = el("defs", {}, svg);
  defs.innerHTML =
    '<linearGradient id="water" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#74c0fc"/>' +
    '<stop offset="1" stop-color="#1c7ed6"/></linearGradient>' +
    '<pattern id="hatch" width="9" height="9" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
    '<rect width="9" height="9" fill="rgba(33,37,41,0.14)"/><rect width="3" height="9" fill="rgba(33,37,41,0.42)"/></pattern>' +
    '<filter id="shadow" x="-20%" y="-20%" width="140%" height="140%"><feDropShadow dx="1" dy="2" stdDeviation="1.5" flood-opacity="0.35"/></filter>';

  // deck, and the side panel (drawn in its own group: layout() places it beside or below)
  const deck = el("rect", { x: 0, y: 0, width: 960, height: 780, rx: 16, fill: "#efe6d6" }, svg);
  const side = el("g", { class: "side" }, svg);
  const sideBg = el("rect", { x: 0, y: 0, width: 332, height: 780, rx: 16, fill: "#f8f9fa", stroke: "#dee2e6" }, side);
  const sideA = el("g", { class: "side-status" }, side);
  const sideB = el("g", { class: "side-players" }, side);

  // pool with water balls
  const poolG = el("g", { class: "pool" }, svg);
  el("rect", { x: POOL.x, y: POOL.y, width: POOL.w, height: POOL.h, rx: 22, fill: "url(#water)", stroke: "#a5d8ff", "stroke-width": 6 }, poolG);
  for (let i = 0; i < 3; i++) {
    const y = POOL.y + 30 + i * 28;
    el("path", { d: `M${POOL.x + 30} ${y} q 20 -8 40 0 t 40 0 t 40 0 t 40 0 t 40 0 t 40 0`, fill: "none", stroke: "rgba(255,255,255,0.45)", "stroke-width": 2 }, poolG);
  }
  txt(POOL.x + 24, POOL.y + 26, "POOL", { class: "pool-label" }, poolG);
  const poolCount = txt(POOL.x + 24, POOL.y + POOL.h - 14, "", { class: "pool-count" }, poolG);
  const poolBalls = [];
  for (let i = 0; i < BOARD.chips; i++) {
    const cx = POOL.x + 330 + (i % 8) * 30, cy = POOL.y + 38 + Math.floor(i / 8) * 34;
    poolBalls.push(ball(cx, cy, 11, poolG));
  }
  function ball(cx, cy, r, parent) {
    const g = el("g", { class: "chip" }, parent);
    el("circle", { cx: cx, cy: cy, r: r, fill: "#fff", stroke: "#495057", "stroke-width": 1.2 }, g);
    el("path", { d: `M${cx - r} ${cy} A ${r} ${r} 0 0 1 ${cx + r} ${cy} Z`, fill: "#fa5252" }, g);
    el("path", { d: `M${cx - r * 0.45} ${cy - r * 0.88} L${cx + r * 0.45} ${cy - r * 0.88} L${cx + r * 0.2} ${cy} L${cx - r * 0.2} ${cy} Z`, fill: "#ffd43b" }, g);
    return g;
  }

  // diving board
  el("rect", { x: 770, y: DIVE.y - 13, width: 150, height: 26, rx: 6, fill: "#f1f3f5", stroke: "#868e96", "stroke-width": 2 }, svg);
  txt(790, DIVE.y + 5, "diving board", { class: "dive-label" }, svg);

  // the lifeguard's loop
  const loop = el("g", { class: "loop" }, svg);
  el("rect", { x: LEFT_X, y: LOOP_TOP, width: RIGHT_X - LEFT_X, height: BOTTOM_Y - LOOP_TOP, rx: 28, fill: "none", stroke: "#adb5bd", "stroke-width": 3, "stroke-dasharray": "8 7" }, loop);
  el("line", { x1: DIVE.x, y1: DIVE.y + 13, x2: RIGHT_X, y2: LOOP_TOP, stroke: "#adb5bd", "stroke-width": 3, "stroke-dasharray": "8 7" }, loop);
  [[RIGHT_X, 200, 90], [RIGHT_X, 446, 90], [RIGHT_X, 600, 90], [480, BOTTOM_Y, 180], [LEFT_X, 446, 270], [LEFT_X, 600, 270], [480, LOOP_TOP, 0]].forEach((a) => {
    el("path", { d: "M -7 -7 L 7 0 L -7 7 Z", fill: "#868e96", transform: `translate(${a[0]},${a[1]}) rotate(${a[2]})` }, loop);
  });

  // track fields
  const fieldEls = {};
  BOARD.track.forEach((f) => {
    if (f.name === "diving-board") return;
    const p = trackPos(f);
    const g = el("g", { class: "field", "data-field": f.name, transform: `translate(${p.x},${p.y})` }, svg);
    const w = f.row !== null ? 84 : Math.min(zoneX.find((z) => z.colour === f.colour).w, 120);
    const fill = f.row !== null ? "#e9ecef" : FACE[f.colour];
    fieldEls[f.name] = el("rect", { x: -w / 2, y: -31, width: w, height: 62, rx: 10, fill: fill, stroke: "#868e96", "stroke-width": 2 }, g);
    const label = f.row !== null ? `row ${f.row}` : f.colour;
    txt(0, 24, label, { class: "field-label", "text-anchor": "middle", fill: f.row !== null || f.colour === "yellow" ? "#212529" : "#fff" }, g);
  });

  // zone headings along row 4
  zoneX.forEach((z) => {
    el("rect", { x: z.x, y: ROW_Y[4] - 14, width: z.w, height: 6, rx: 3, fill: FACE[z.colour] }, svg);
  });
  [4, 3, 2].forEach((v) => txt(X0 - 18, ROW_Y[v] + LH / 2 + 5, String(v), { class: "row-value", "text-anchor": "middle" }, svg));

  // loungers
  const LOUNGERS = {};
  BOARD.loungers.forEach((lo) => {
    const p = loungerPos[lo.name];
    const five = lo.colour === null;
    const g = el("g", { class: "lounger" + (five ? " five" : ""), "data-lounger": lo.name, transform: `translate(${p.x},${p.y})` }, svg);
    const stroke = five ? "#0b7285" : FACE[lo.colour];
    el("rect", { class: "bed", width: p.w, height: p.h, rx: 10, fill: five ? "#e3fafc" : PALE[lo.colour], stroke: stroke, "stroke-width": 3 }, g);
    el("rect", { x: 3, y: 3, width: p.w - 6, height: 18, rx: 7, fill: stroke, opacity: 0.9 }, g);
    txt(p.w / 2, 17, String(lo.value), { class: "value", "text-anchor": "middle" }, g);
    const towel = el("g", { class: "towel", display: "none" }, g);
    const tw = p.w - 14, th = p.h - 44;
    const cloth = el("rect", { x: 7, y: 26, width: tw, height: th, rx: 5, stroke: "#212529", "stroke-width": 1.5, filter: "url(#shadow)" }, towel);
    const stripes = el("g", { class: "fringe" }, towel);
    [28.5, 33.5, 26 + th - 8.5, 26 + th - 3.5].forEach((y) => el("rect", { x: 8, y: y, width: tw - 2, height: 2.4 }, stripes));
    const star = el("g", { class: "guest-badge", transform: `translate(${p.w - 10},${28})` }, towel);
    el("circle", { r: 9.5, fill: "#fab005", stroke: "#212529", "stroke-width": 1.3 }, star);
    el("path", { d: starPath(6.5, 2.8), fill: "#fff" }, star);
    const seatNo = txt(p.w / 2, 53, "", { class: "towel-seat", "text-anchor": "middle" }, towel);
    const fig = el("g", { class: "figure", display: "none", transform: `translate(${p.w / 2},${p.h - 33})` }, g);
    const figBody = el("path", { d: "M-11 12 L-5 -1 Q0 -4 5 -1 L11 12 Z", stroke: "#111", "stroke-width": 1.6 }, fig);
    const figHead = el("circle", { cx: 0, cy: -8, r: 6.5, stroke: "#111", "stroke-width": 1.6 }, fig);
    const blocked = el("g", { class: "blocked", display: "none" }, g);
    el("rect", { width: p.w, height: p.h, rx: 10, fill: "url(#hatch)" }, blocked);
    el("circle", { cx: 12, cy: 12, r: 8.5, fill: "#fff", stroke: "#e03131", "stroke-width": 2.5 }, blocked);
    el("line", { x1: 6.5, y1: 6.5, x2: 17.5, y2: 17.5, stroke: "#e03131", "stroke-width": 2.5 }, blocked);
    const reach = el("rect", { class: "reach", x: -4, y: -4, width: p.w + 8, height: p.h + 8, rx: 13, display: "none" }, g);
    const acted = el("rect", { class: "acted", x: -6, y: -6, width: p.w + 12, height: p.h + 12, rx: 15, display: "none" }, g);
    txt(p.w / 2, p.h - 5, lo.name, { class: "lname", "text-anchor": "middle" }, g);
    LOUNGERS[lo.name] = { g, towel, cloth, stripes, star, seatNo, fig, figBody, figHead, blocked, reach, acted };
  });

  // the lifeguard
  const guard = el("g", { class: "lifeguard", "data-position": "diving-board" }, svg);
  el("circle", { r: 19, fill: "#e03131", stroke: "#fff", "stroke-width": 3, filter: "url(#shadow)" }, guard);
  el("path", { d: "M-3.5 -11 h7 v7.5 h7.5 v7 h-7.5 v7.5 h-7 v-7.5 h-7.5 v-7 h7.5 z", fill: "#fff" }, guard);

  // legend (k: its scale; a narrow screen draws it twice as large, in more lines)
  const legend = el("g", { class: "legend", transform: "translate(20,708)" }, svg);
  function drawLegend(k) {
    legend.innerHTML = "";
    let x = 0, y = 0;
    const item = (label, draw) => {
      const w = (34 + label.length * 6.9 + 18) * k;
      if (x + w > 930) {
        x = 0;
        y += 30 * k;
      }
      const g = el("g", { transform: `translate(${x},${y}) scale(${k})` }, legend);
      draw(g);
      txt(34, 20, label, { class: "legend-label" }, g);
      x += w;
    };
    item("plain towel", (g) => el("rect", { x: 0, y: 4, width: 26, height: 22, rx: 4, fill: SEAT[0], stroke: "#212529" }, g));
    item("guest side up (secured)", (g) => {
      el("rect", { x: 0, y: 4, width: 26, height: 22, rx: 4, fill: SEAT[0], stroke: "#212529" }, g);
      [6, 10, 19, 23].forEach((y) => el("rect", { x: 1, y: y, width: 24, height: 1.8, fill: "#fff" }, g));
      const b = el("g", { transform: "translate(24,6)" }, g);
      el("circle", { r: 7, fill: "#fab005", stroke: "#212529", "stroke-width": 1 }, b);
      el("path", { d: starPath(4.8, 2), fill: "#fff" }, b);
    });
    item("guest figure", (g) => {
      el("path", { d: "M-11 12 L-5 -1 Q0 -4 5 -1 L11 12 Z", fill: SEAT[1], stroke: "#111", transform: "translate(13,13)" }, g);
      el("circle", { cx: 13, cy: 6, r: 6, fill: SEAT[1], stroke: "#111" }, g);
    });
    item("lifeguard", (g) => {
      const t = el("g", { transform: "translate(13,15) scale(0.62)" }, g);
      el("circle", { r: 19, fill: "#e03131", stroke: "#fff", "stroke-width": 3 }, t);
      el("path", { d: "M-3.5 -11 h7 v7.5 h7.5 v7 h-7.5 v7.5 h-7 v-7.5 h-7.5 v-7 h7.5 z", fill: "#fff" }, t);
    });
    item("blocked by lifeguard", (g) => el("rect", { x: 0, y: 2, width: 26, height: 26, rx: 4, fill: "url(#hatch)", stroke: "#868e96" }, g));
    item("reachable now", (g) => el("rect", { class: "reach", x: 2, y: 4, width: 22, height: 22, rx: 4 }, g));
    item("last action here", (g) => el("rect", { class: "acted", x: 2, y: 4, width: 22, height: 22, rx: 4 }, g));
    return y + 30 * k; // the height it took
  }

  // ---------------------------------------------------------------- side panel (in the svg)
  const PX = 20; // in the side panel's own coordinates
  const statusTitle = txt(PX, 36, "", { class: "panel-title" }, sideA);
  const statusLine = txt(PX, 60, "", { class: "panel-line" }, sideA);
  const statusLine2 = txt(PX, 82, "", { class: "panel-line" }, sideA);
  const statusLine3 = txt(PX, 102, "", { class: "panel-line" }, sideA); // variant · final round
  const LINE_W = 332 - 2 * PX; // the side panel's width inside its margins
  function fitLine(t, text) { // a line too long for the panel is narrowed, never clipped
    t.textContent = text;
    t.removeAttribute("textLength");
    t.removeAttribute("lengthAdjust");
    if (text && t.getComputedTextLength && t.getComputedTextLength() > LINE_W) {
      t.setAttribute("textLength", LINE_W);
      t.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }
  const diceG = el("g", { class: "dice" }, sideA);
  const diceRows = {};
  [["last", "throw on the table"], ["kept", "set aside (kept)"], ["result", "result of the roll"]].forEach((r, i) => {
    const y = 122 + i * 58;
    const g = el("g", { id: "dice-" + r[0], class: "dice-row", transform: `translate(${PX},${y})`, "data-dice": "" }, diceG);
    txt(0, 0, r[1], { class: "dice-label" }, g);
    const holder = el("g", { transform: "translate(0,8)" }, g);
    diceRows[r[0]] = { g, holder };
  });
  const PLAYER_Y = 300, PLAYER_H = 116;
  const players = [];
  for (let s = 0; s < DATA.players; s++) {
    const y = PLAYER_Y + s * PLAYER_H;
    const g = el("g", { class: "player", "data-seat": s, transform: `translate(${PX - 8},${y})` }, sideB);
    const box = el("rect", { class: "player-box", width: 308, height: PLAYER_H - 10, rx: 12 }, g);
    el("rect", { x: 12, y: 12, width: 26, height: 30, rx: 5, fill: SEAT[s], stroke: "#212529", "stroke-width": 1.5 }, g);
    txt(25, 33, String(s), { class: "towel-seat", "text-anchor": "middle", fill: SEAT_INK[s] }, g);
    const name = txt(48, 27, SEATING[s], { class: "player-name" }, g);
    const sub = txt(48, 44, `seat ${s}`, { class: "player-sub" }, g);
    const score = txt(294, 40, "0", { class: "player-score", "text-anchor": "end" }, g);
    txt(294, 56, "points", { class: "player-sub", "text-anchor": "end" }, g);
    const supplies = txt(14, 70, "", { class: "player-line" }, g);
    const chipsG = el("g", { transform: "translate(0,0)" }, g);
    const chipBalls = [];
    for (let i = 0; i < 4; i++) chipBalls.push(ball(84 + i * 24, 88, 9, chipsG));
    const chipsLabel = txt(14, 93, "chips", { class: "player-line" }, g);
    const flag = txt(294, 93, "", { class: "player-flag", "text-anchor": "end" }, g);
    players.push({ g, box, name, sub, score, supplies, chipBalls, chipsLabel, flag });
  }

  // ---------------------------------------------------------------- layout
  // Wide: the side panel right of the deck (viewBox 1300 x 780).  Narrow (a phone): the deck
  // takes the whole width with larger text and a taller legend, and the side panel goes below
  // it, scaled up, its status and dice in one column and the players in the other.
  function layout() {
    const narrow = !!(NARROW && NARROW.matches);
    svg.classList.toggle("narrow", narrow);
    svg.dataset.layout = narrow ? "narrow" : "wide";
    const legendH = drawLegend(narrow ? 2 : 1);
    if (!narrow) {
      deck.setAttribute("height", 780);
      side.setAttribute("transform", "translate(968,0)");
      sideBg.setAttribute("width", 332);
      sideBg.setAttribute("height", 780);
      sideB.removeAttribute("transform");
      svg.setAttribute("viewBox", "0 0 1300 780");
      return;
    }
    const deckH = 708 + legendH + 12;
    const playersH = DATA.players * PLAYER_H;
    const innerW = 340 + 318, innerH = Math.max(300, playersH + 10);
    const S = 960 / innerW;
    deck.setAttribute("height", deckH);
    side.setAttribute("transform", `translate(0,${deckH + 10}) scale(${S})`);
    sideBg.setAttribute("width", innerW);
    sideBg.setAttribute("height", innerH);
    sideB.setAttribute("transform", `translate(336,${10 - PLAYER_Y})`);
    svg.setAttribute("viewBox", `0 0 960 ${Math.ceil(deckH + 10 + innerH * S)}`);
  }
  layout();
  if (NARROW) {
    if (NARROW.addEventListener) NARROW.addEventListener("change", layout);
    else if (NARROW.addListener) NARROW.addListener(layout);
  }

  // ---------------------------------------------------------------- html panels
  const slider = document.getElementById("slider");
  const stepLabel = document.getElementById("step-label");
  const btnPlay = document.getElementById("btn-play");
  const speedSel = document.getElementById("speed");
  const evIndex = document.getElementById("ev-index");
  const evWho = document.getElementById("ev-who");
  const evText = document.getElementById("ev-text");
  const evMeta = document.getElementById("ev-meta");
  const evLegal = document.getElementById("ev-legal");
  const evForfeit = document.getElementById("ev-forfeit");
  const evResult = document.getElementById("ev-result");
  const log = document.getElementById("event-log");
  slider.max = String(N);

  function seatName(s) {
    return `seat ${s} (${SEATING[s]})`;
  }
  function dieList(counts) {
    const out = [];
    FACE_ORDER.forEach((f) => {
      for (let i = 0; i < (counts[f] || 0); i++) out.push(f);
    });
    return out;
  }
  const VERB = {
    place: (e) => `places a towel (plain side up) on ${e.lounger}`,
    stop: () => "stops rolling",
    keep: (e) => `keeps ${e.action.slice(5)} and throws the rest`,
    chip: () => "spends a chip: throws the last throw again",
    flip: (e) => `flips the towel on ${e.lounger} to its guest side (secured)`,
    reclaim: (e) => `reclaims ${e.lounger}: the guest figure goes home, the towel is secured`,
    invade: (e) => `invades ${e.lounger} with a guest figure and takes chips`,
    conquer: (e) => `conquers ${e.lounger}: replaces the towel with an own one, guest side up`,
    "take-five": (e) => `takes the five-lounger ${e.lounger} (towel guest side up)`,
    pass: () => "passes",
  };
  // Where the rules page explains an event (the viewer links there when it has a rules page).
  const RULES = root.dataset.rules || "";
  const RULE_OF = {
    place: ["R8", "#r8"], stop: ["R12", "#r12"], keep: ["R12", "#r12"], chip: ["R12", "#r12"],
    flip: ["R19", "#r19"], reclaim: ["R20", "#r20"], invade: ["R21", "#r21"], conquer: ["R22", "#r22"],
    "take-five": ["R23", "#r23"], pass: ["R19–R24", "#34-the-action"],
  };
  function ruleOf(e) {
    if (!e) return null;
    if (e.kind === "throw") return ["R10–R14, §5", "#31-rolling"];
    return RULE_OF[e.verb] || null;
  }
  function describe(e) {
    if (e.kind === "throw") return `throw: ${e.faces.join(", ")}`;
    const f = VERB[e.verb];
    return f ? f(e) : e.action;
  }

  // event log (built once)
  const logItems = [];
  (function buildLog() {
    const li0 = document.createElement("li");
    li0.textContent = "start (setup)";
    li0.dataset.step = "0";
    log.appendChild(li0);
    logItems.push(li0);
    EVENTS.forEach(addLogItem);
    log.addEventListener("click", (ev) => {
      const li = ev.target.closest("li");
      if (li) go(Number(li.dataset.step));
    });
  })();
  function addLogItem(e) {
    const li = document.createElement("li");
    li.dataset.step = String(e.index);
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = SEAT[e.seat];
    li.appendChild(sw);
    const t = document.createElement("span");
    t.textContent = e.kind === "throw" ? e.throw : `${e.seat}: ${e.action}`;
    li.appendChild(t);
    if (e.kind === "throw") li.className = "throw";
    if (e.auto) li.classList.add("auto");
    log.appendChild(li);
    logItems.push(li);
  }

  function forfeitedBy(k) {
    return FORFEITS.filter((f) => (f.at_event || 0) <= k);
  }

  // ---------------------------------------------------------------- update
  let step = 0;
  function render(k) {
    const s = STATES[k];
    const e = k > 0 ? EVENTS[k - 1] : null;
    const blocked = new Set(s.blocked);
    const reachable = new Set(s.reachable);
    svg.dataset.step = String(k);
    svg.dataset.phase = s.phase;
    svg.dataset.seat = String(s.seat);
    svg.dataset.round = String(s.round);
    svg.dataset.turn = String(s.turn);
    svg.dataset.lifeguard = s.lifeguard;
    svg.dataset.pool = String(s.pool);
    svg.dataset.unoccupied = String(s.unoccupied);
    svg.dataset.rules = GAME_RULES.version;

    s.loungers.forEach((lo) => {
      const L = LOUNGERS[lo.name];
      const has = lo.towel !== null;
      L.g.dataset.towel = has ? String(lo.towel) : "";
      L.g.dataset.side = has ? lo.side : "";
      L.g.dataset.figure = lo.figure !== null ? String(lo.figure) : "";
      L.g.dataset.blocked = blocked.has(lo.name) ? "1" : "0";
      L.g.dataset.reachable = reachable.has(lo.name) ? "1" : "0";
      show(L.towel, has);
      if (has) {
        const guest = lo.side === "guest";
        L.cloth.setAttribute("fill", SEAT[lo.towel]);
        show(L.stripes, guest);
        L.stripes.setAttribute("fill", SEAT_INK[lo.towel]);
        show(L.star, guest);
        L.seatNo.textContent = String(lo.towel);
        L.seatNo.setAttribute("fill", SEAT_INK[lo.towel]);
        L.towel.setAttribute("class", "towel " + (guest ? "guest" : "plain"));
      }
      show(L.fig, lo.figure !== null);
      if (lo.figure !== null) {
        L.figBody.setAttribute("fill", SEAT[lo.figure]);
        L.figHead.setAttribute("fill", SEAT[lo.figure]);
      }
      show(L.blocked, blocked.has(lo.name));
      show(L.reach, reachable.has(lo.name));
      show(L.acted, !!(e && e.lounger === lo.name));
    });

    // lifeguard
    const field = BOARD.track.find((f) => f.name === s.lifeguard);
    const gp = trackPos(field);
    const lift = field.name === "diving-board" ? 0 : 8; // stand above the field's label
    guard.setAttribute("transform", `translate(${gp.x},${gp.y - lift}) scale(0.88)`);
    guard.dataset.position = s.lifeguard;
    for (const name in fieldEls) fieldEls[name].setAttribute("stroke", name === s.lifeguard ? "#e03131" : "#868e96");
    for (const name in fieldEls) fieldEls[name].setAttribute("stroke-width", name === s.lifeguard ? 5 : 2);

    // pool
    poolBalls.forEach((b, i) => show(b, i < s.pool));
    poolCount.textContent = `${s.pool} water ball${s.pool === 1 ? "" : "s"} (chips) in the pool`;

    // status
    const over = s.phase === "over";
    statusTitle.textContent = over ? "Game over" : s.phase === "setup" ? "Setup: placing towels" : `Round ${s.round} · turn ${s.turn}`;
    const PHASE = { setup: "places a towel", throw: `throws ${s.dice_to_throw} dice`, roll: "stop, keep or chip?", action: "uses one lounger or passes", over: "" };
    fitLine(statusLine, over ? `ended: ${s.termination || "forfeit"}` : `${seatName(s.seat)} ${PHASE[s.phase]}`);
    fitLine(statusLine2, `${s.unoccupied} loungers not occupied (ends at ≤ ${GAME_RULES.end_unoccupied})`);
    fitLine(statusLine3, [VARIANT, s.final_round ? "final round" : ""].filter(Boolean).join(" · "));

    // dice
    const show3 = { last: s.phase === "roll", kept: s.phase === "roll" || s.phase === "throw", result: s.phase === "action" };
    drawDice("last", show3.last ? s.last_throw : {}, 0, show3.last);
    drawDice("kept", show3.kept ? s.kept : {}, s.phase === "throw" ? s.dice_to_throw : 0, show3.kept);
    drawDice("result", show3.result ? s.result : {}, 0, show3.result);

    // players
    const gone = new Set(forfeitedBy(k).map((f) => f.seat));
    for (let p = 0; p < DATA.players; p++) {
      const P = players[p];
      P.g.dataset.score = String(s.scores[p]);
      P.g.dataset.towels = String(s.towels[p]);
      P.g.dataset.figures = String(s.figures[p]);
      P.g.dataset.chips = String(s.chips[p]);
      P.g.dataset.active = !over && p === s.seat ? "1" : "0";
      P.score.textContent = String(s.scores[p]);
      P.supplies.textContent = `supply: ${s.towels[p]} towels · ${s.figures[p]} figures`;
      P.chipBalls.forEach((b, i) => show(b, i < s.chips[p]));
      P.chipsLabel.textContent = `chips ${s.chips[p]}`;
      P.box.setAttribute("class", "player-box" + (!over && p === s.seat ? " active" : "") + (gone.has(p) ? " gone" : ""));
      let flag = "";
      if (gone.has(p)) flag = "FORFEITED";
      else if (over && DATA.result && DATA.result.placings) flag = `place ${DATA.result.placings[p]}`;
      else if (over && DATA.placings) flag = `place ${DATA.placings[p]}`; // (a live game's end)
      else if (!over && p === s.seat) flag = "◀ to act"; // (nobody acts in a finished game)
      P.flag.textContent = flag;
    }

    // event panel
    root.dataset.step = String(k);
    slider.value = String(k);
    stepLabel.textContent = `${k} / ${N}`;
    evIndex.textContent = k === 0 ? "start" : `event ${k}`;
    if (!e) {
      evWho.textContent = "";
      evWho.style.removeProperty("--c");
      evText.textContent = `New game for ${DATA.players} players. Each seat in turn places a towel, plain side up.`;
      evMeta.textContent = "";
      evLegal.innerHTML = "";
    } else {
      evWho.textContent = seatName(e.seat);
      evWho.style.setProperty("--c", SEAT[e.seat]);
      evText.textContent = describe(e);
      const meta = [];
      // seeds arrive as strings and times preformatted (ms_text): the page never rounds numbers
      if (e.kind === "throw") meta.push(`a chance event: the dice stream of seed ${DATA.header.seed}`);
      if (e.ms_text !== undefined) meta.push(`think time ${e.ms_text} ms`);
      if (e.cpu_ms_text !== undefined) meta.push(`CPU ${e.cpu_ms_text} ms`);
      if (e.away_ms_text !== undefined) meta.push(`disconnected ${e.away_ms_text} ms (not counted)`);
      if (e.forced) meta.push("forced (the only legal action)");
      if (e.auto) meta.push("auto (played by the referee for a forfeited seat)");
      evMeta.textContent = meta.join(" · ");
      evMeta.dataset.ms = e.ms_text !== undefined ? e.ms_text : "";
      evLegal.innerHTML = "";
      if (e.legal) {
        const h = document.createElement("h4");
        h.textContent = `legal alternatives (${e.legal.length})`;
        evLegal.appendChild(h);
        const ul = document.createElement("ul");
        e.legal.forEach((a) => {
          const li = document.createElement("li");
          li.textContent = a;
          if (a === e.action) li.className = "chosen";
          ul.appendChild(li);
        });
        evLegal.appendChild(ul);
      }
    }
    const evRule = document.getElementById("ev-rule");
    const rule = RULES ? ruleOf(e) : null;
    evRule.innerHTML = "";
    if (rule) {
      const a = document.createElement("a");
      a.href = RULES + rule[1];
      a.textContent = `rule ${rule[0]}`;
      evRule.appendChild(document.createTextNode("see "));
      evRule.appendChild(a);
    }
    const ff = forfeitedBy(k);
    evForfeit.hidden = ff.length === 0;
    evForfeit.innerHTML = "";
    ff.forEach((f) => {
      const div = document.createElement("div");
      div.dataset.seat = String(f.seat);
      div.dataset.reason = f.reason;
      div.textContent = `${seatName(f.seat)} forfeited after event ${f.at_event}: ${f.reason}` + (f.detail ? ` — ${f.detail}` : "");
      evForfeit.appendChild(div);
    });
    evResult.hidden = k !== N || !DATA.result || !DATA.result.scores; // (a live game has none yet)
    if (!evResult.hidden) {
      const r = DATA.result;
      evResult.textContent = `Result (${r.termination}): ` + r.scores.map((sc, p) => `${SEATING[p]} ${sc} pts, place ${r.placings[p]}`).join(" · ");
    }
    logItems.forEach((li) => li.classList.remove("current"));
    const cur = logItems[k];
    cur.classList.add("current");
    const box = log.getBoundingClientRect(), r = cur.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) log.scrollTop += r.top - box.top - box.height / 2;
  }

  function drawDice(row, counts, blanks, visible) {
    const R = diceRows[row];
    R.holder.innerHTML = "";
    const dice = dieList(counts);
    R.g.dataset.dice = dice.join(",");
    R.g.setAttribute("opacity", visible ? 1 : 0.35);
    dice.forEach((f, i) => die(i * 40, f, R.holder));
    for (let i = 0; i < blanks; i++) {
      const g = el("g", { transform: `translate(${(dice.length + i) * 40},0)` }, R.holder);
      el("rect", { width: 32, height: 32, rx: 7, fill: "none", stroke: "#868e96", "stroke-width": 2, "stroke-dasharray": "4 3" }, g);
      txt(16, 22, "?", { class: "die-q", "text-anchor": "middle" }, g);
    }
    if (!dice.length && !blanks) txt(0, 22, visible ? "—" : "", { class: "dice-none" }, R.holder);
  }
  function die(x, face, parent) {
    const g = el("g", { class: "die", "data-face": face, transform: `translate(${x},0)` }, parent);
    el("rect", { width: 32, height: 32, rx: 7, fill: FACE[face], stroke: "#343a40", "stroke-width": 1.5 }, g);
    if (face === "lifeguard") {
      el("path", { d: "M13 6 h6 v7 h7 v6 h-7 v7 h-6 v-7 h-7 v-6 h7 z", fill: "#e03131" }, g);
    } else {
      el("circle", { cx: 16, cy: 16, r: 4, fill: "rgba(255,255,255,0.75)" }, g);
    }
  }

  // ---------------------------------------------------------------- controls
  function go(k) {
    step = Math.max(0, Math.min(N, k | 0));
    render(step);
    try {
      history.replaceState(null, "", "#step=" + step);
    } catch (err) {
      /* some file: pages refuse it; the step just is not in the address then */
    }
  }
  let timer = null;
  function play(on) {
    if (timer) clearInterval(timer);
    timer = null;
    root.dataset.playing = on ? "1" : "0";
    btnPlay.title = on ? "pause (space)" : "play (space)";
    if (!on) return;
    if (step >= N) go(0);
    timer = setInterval(() => {
      if (step >= N) return play(false);
      go(step + 1);
    }, 1000 / Number(speedSel.value));
  }
  document.getElementById("btn-first").addEventListener("click", () => go(0));
  document.getElementById("btn-prev").addEventListener("click", () => go(step - 1));
  document.getElementById("btn-next").addEventListener("click", () => go(step + 1));
  document.getElementById("btn-last").addEventListener("click", () => go(N));
  document.getElementById("btn-prev-turn").addEventListener("click", () => go(turnStart(step, -1)));
  document.getElementById("btn-next-turn").addEventListener("click", () => go(turnStart(step, +1)));
  btnPlay.addEventListener("click", () => play(!timer));
  speedSel.addEventListener("change", () => { if (timer) play(true); });
  slider.addEventListener("input", () => go(Number(slider.value)));
  function turnStart(k, dir) {
    // the next/previous step where a new turn begins (by the engine's turn counter)
    let j = k + dir;
    while (j > 0 && j < N && STATES[j].turn === STATES[k].turn) j += dir;
    if (dir < 0) while (j > 0 && STATES[j - 1].turn === STATES[j].turn) j -= 1;
    return j;
  }
  document.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "ArrowRight") { go(step + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(step - 1); ev.preventDefault(); }
    else if (ev.key === "ArrowUp" || ev.key === "PageUp") { go(turnStart(step, -1)); ev.preventDefault(); }
    else if (ev.key === "ArrowDown" || ev.key === "PageDown") { go(turnStart(step, +1)); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(N); ev.preventDefault(); }
    else if (ev.key === " " || ev.key === "Spacebar") {
      if (tag === "BUTTON") return; // the button's own click toggles
      play(!timer);
      ev.preventDefault();
    }
  });

  // a small handle for the console and for tests
  window.poolViewer = {
    go: go,
    play: play,
    get step() {
      return step;
    },
    get steps() {
      return N;
    },
    // A live page (the play page) adds the states and events that happened since: the states
    // after events N+1.. and those events, in the view data's format; then it steps through them.
    extend: function (states, events, forfeits, result) {
      states.forEach((st) => STATES.push(st));
      events.forEach((e) => { EVENTS.push(e); addLogItem(e); });
      (forfeits || []).forEach((f) => FORFEITS.push(f));
      if (result) DATA.result = result;
      N = EVENTS.length;
      slider.max = String(N);
    },
  };
  // ---------------------------------------------------------------- live mode
  // A running match's page (/live/ID) puts its event stream in data-live: the steps the referee
  // applies arrive as server-sent events ("step": the viewer's event and the state after it) and
  // are appended; a viewer standing on the last step follows them.  Steps already shown are
  // skipped (EventSource reconnects by itself and the server resends); a gap reloads the page.
  // poolViewer.live.latencies: seconds from the referee applying a step to it being drawn here.
  const LIVE = { latencies: [], received: 0, state: "off" };
  window.poolViewer.live = LIVE;
  if (root.dataset.live && window.EventSource) {
    const source = new EventSource(root.dataset.live);
    const status = document.getElementById("live-status");
    const badge = document.getElementById("live-badge");
    LIVE.state = root.dataset.liveState = "connecting";
    source.addEventListener("hello", () => { LIVE.state = root.dataset.liveState = "open"; });
    source.addEventListener("step", (msg) => {
      const fresh = JSON.parse(msg.data).steps.filter((s) => s.k > N);
      if (!fresh.length) return;
      if (fresh[0].k !== N + 1) { location.reload(); return; }
      const follow = step >= N;
      window.poolViewer.extend(fresh.map((s) => s.state), fresh.map((s) => s.event));
      if (follow) go(N);
      const now = Date.now() / 1000;
      fresh.forEach((s) => { if (s.ts) LIVE.latencies.push(now - s.ts); }); // (null: from the stored replay)
      LIVE.received += fresh.length;
      root.dataset.liveSteps = String(N);
    });
    source.addEventListener("reset", () => location.reload());
    source.addEventListener("end", (msg) => {
      const d = JSON.parse(msg.data);
      source.close();
      LIVE.state = root.dataset.liveState = "ended";
      if (Array.isArray(d.placings) && d.placings.length === DATA.players && d.placings.every((x) => x !== null)) {
        DATA.placings = d.placings; // each seat's place, as the replay shows it
        go(step);
      }
      if (badge) badge.textContent = "ended";
      if (status) {
        status.textContent = "the match is over: ";
        const a = document.createElement("a");
        a.href = d.url;
        a.id = "live-replay";
        a.textContent = "its replay";
        status.appendChild(a);
      }
    });
    source.onerror = () => { if (LIVE.state !== "ended") LIVE.state = root.dataset.liveState = "retrying"; };
  }

  function stepFromHash() {
    const m = /step=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }
  // follow #step=N when the address changes on an open page (a pasted link, back/forward)
  window.addEventListener("hashchange", () => {
    const k = stepFromHash();
    if (k !== null && k !== step) {
      play(false);
      go(k);
    }
  });
  const first = stepFromHash();
  go(first !== null ? first : root.dataset.live ? N : 0); // a live match opens at its latest move
  root.dataset.ready = "1";
})();
