#!/usr/bin/env node
// Pool Arena sample bot in JavaScript (Node.js >= 18, @grpc/grpc-js + @grpc/proto-loader).
//
// A complete bot that speaks the protocol of proto/arena/v1/arena.proto directly, without any
// Python: it is what a bot author in another language has to write (see proto/README.md).
//
//   npm ci --prefix bots/node            # once: installs the two pinned dependencies
//   arena match bots/node/bot.js greedy  # play it (the arena starts it as `node bot.js ...`)
//
// The arena starts it with --address=ADDR and the environment ARENA_ADDRESS / ARENA_TOKEN: the token
// only in the environment (never on a command line, which any process on the host can read).
// --token=TOKEN is accepted too, for a remote bot started by hand.
// For every match it opens one Play stream with the metadata `arena-token: TOKEN`, answers every
// DecisionRequest with one of its legal actions, and after a MatchResult opens the next stream
// (a bot kept running across matches) until a Goodbye tells it to exit (status 0).
//
// The .proto is read at run time from ../../proto/arena/v1/arena.proto (or $ARENA_PROTO).  The
// single-file build (`npm run build`, see build.js) embeds it instead, so that file runs alone.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_NAME = 'node-sample';
const BOT_VERSION = '1.0.0';
const TOKEN_KEY = 'arena-token';
const LOADER_OPTIONS = {
  keepCase: true, // field names as in the .proto: request_id, legal_actions, ...
  longs: String, // uint64 request_id arrives as a decimal string; echo it unchanged
  enums: String, // phase: "PHASE_SETUP", "PHASE_ROLL", ...
  defaults: true, // absent scalars and arrays are filled in (0, false, "", [])
  oneofs: true, // msg.message / event.event name the member of the oneof that is set
};
const FACES = ['green', 'purple', 'yellow', 'red', 'blue', 'lifeguard'];
const COLOURS = FACES.slice(0, 5);
const LIFEGUARD = 5;

// ------------------------------------------------------------------ command line and protocol

function parseArgs(argv, env) {
  const opts = { address: env.ARENA_ADDRESS || '', token: env.ARENA_TOKEN || '' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    for (const key of ['address', 'token']) {
      if (arg === `--${key}` && i + 1 < argv.length) {
        opts[key] = argv[++i];
      } else if (arg.startsWith(`--${key}=`)) {
        opts[key] = arg.slice(key.length + 3);
      }
    }
  }
  return opts;
}

function loadProtocol() {
  let definition;
  if (typeof globalThis.ARENA_PROTO_DESCRIPTOR_SET === 'string') {
    // the single-file build: a FileDescriptorSet of arena.proto, embedded by build.js
    const bytes = Buffer.from(globalThis.ARENA_PROTO_DESCRIPTOR_SET, 'base64');
    definition = protoLoader.loadFileDescriptorSetFromBuffer(bytes, LOADER_OPTIONS);
  } else {
    const file = process.env.ARENA_PROTO || path.join(__dirname, '..', '..', 'proto', 'arena', 'v1', 'arena.proto');
    if (!fs.existsSync(file)) {
      throw new Error(
        `cannot read the protocol at ${file}. In the arena's sandbox a bot sees only its own ` +
          'folder, and a registered bot only its own file: play the single-file build ' +
          '(npm run build --prefix bots/node -> bots/node/dist/nodebot.js), or use --no-sandbox',
      );
    }
    definition = protoLoader.loadSync(file, LOADER_OPTIONS);
  }
  return grpc.loadPackageDefinition(definition).arena.v1;
}

// ------------------------------------------------------------------ the board, from the names

// "green-4a" -> {colour: 0, value: 4}; "purple-3" -> {colour: 1, value: 3}; "five-1" -> {colour: -1, value: 5}
function loungerInfo(name) {
  const m = /^([a-z]+)-(\d)/.exec(name);
  if (!m) return { name, colour: -1, value: 0 };
  if (m[1] === 'five') return { name, colour: -1, value: 5 };
  return { name, colour: COLOURS.indexOf(m[1]), value: Number(m[2]) };
}

// The lifeguard's field after `steps` moves (rules R6, R15): "diving-board" is track[0] and is
// left for good on the first step; the loop is track[1..11], walked in order and round again.
function lifeguardAfter(track, field, steps) {
  let i = track.indexOf(field);
  for (let s = 0; s < steps; s++) i = i <= 0 ? 1 : 1 + (i % (track.length - 1));
  return track[Math.max(i, 0)];
}

// Does the lifeguard on `field` block lounger `lo`? A row field "row3-..." blocks value 3, a
// colour field blocks that colour; five-loungers are never blocked.
function blocked(field, lo) {
  if (lo.colour < 0 || !field || field === 'diving-board') return false;
  const row = /^row(\d)-/.exec(field);
  if (row) return Number(row[1]) === lo.value;
  return COLOURS[lo.colour] === field;
}

// ------------------------------------------------------------------ the strategy

class Strategy {
  constructor() {
    this.seat = 0;
    this.loungers = [];
    this.track = [];
  }

  welcome(w) {
    this.seat = w.seat;
    this.loungers = w.lounger_names.map(loungerInfo);
    this.track = w.track;
  }

  // What this seat could do on each lounger if it reached it: [{lounger, verb, score, secure}].
  options(state) {
    const me = this.seat;
    const out = [];
    this.loungers.forEach((lo, id) => {
      const towel = state.towel[id];
      const figure = state.figure[id];
      if (state.secured[id]) return; // R24: nothing more happens on a secured lounger
      if (lo.colour < 0) {
        if (towel < 0 && state.towels[me] > 0) out.push({ id, lo, verb: 'take-five', score: 5, secure: true });
      } else if (towel === me && figure < 0) {
        out.push({ id, lo, verb: 'flip', score: lo.value, secure: true });
      } else if (towel === me && figure !== me) {
        out.push({ id, lo, verb: 'reclaim', score: lo.value + 1, secure: true });
      } else if (towel >= 0 && towel !== me && figure === me && state.towels[me] > 0) {
        out.push({ id, lo, verb: 'conquer', score: lo.value - 0.5, secure: true });
      } else if (towel >= 0 && towel !== me && figure < 0 && state.figures[me] > 0) {
        out.push({ id, lo, verb: 'invade', score: 1 + 0.1 * lo.value, secure: false });
      }
    });
    return out;
  }

  // The best score reachable with `counts` (6 dice counts) with the lifeguard on `field`.
  bestWith(state, counts, field) {
    let best = 0;
    const five = Math.max(...counts.slice(0, 5)) >= 5;
    for (const o of this.options(state)) {
      const ok = o.lo.colour < 0 ? five : counts[o.lo.colour] >= o.lo.value && !blocked(field, o.lo);
      if (ok) best = Math.max(best, o.score);
    }
    return best;
  }

  choose(state, legal) {
    switch (state.phase) {
      case 'PHASE_SETUP':
        return this.place(state, legal);
      case 'PHASE_ROLL':
        return this.roll(state, legal);
      case 'PHASE_ACTION':
        return this.act(legal);
      default:
        return legal[0];
    }
  }

  // Setup: the highest-value free lounger; among equals, the colour we already hold most of.
  place(state, legal) {
    const mine = [0, 0, 0, 0, 0];
    this.loungers.forEach((lo, id) => {
      if (state.towel[id] === this.seat && lo.colour >= 0) mine[lo.colour]++;
    });
    let best = null;
    let bestKey = -1;
    for (const a of legal) {
      if (!a.startsWith('place ')) continue;
      const lo = loungerInfo(a.slice(6));
      const key = lo.value * 100 + (lo.colour >= 0 ? mine[lo.colour] : 0);
      if (key > bestKey) [best, bestKey] = [a, key];
    }
    return best || legal[0];
  }

  // Rolling: keep the dice of one colour (the one kept so far, else the most promising one of
  // this throw) and stop once the result reaches the best lounger that colour could still use.
  roll(state, legal) {
    const kept = state.kept;
    const last = state.last_throw;
    const result = kept.map((n, f) => n + last[f]);
    const landing = lifeguardAfter(this.track, state.lifeguard, result[LIFEGUARD]);
    const now = this.bestWith(state, result, landing);
    const opts = this.options(state).filter((o) => !blocked(state.lifeguard, o.lo));

    // the colour to collect
    let target = COLOURS.findIndex((_, c) => kept[c] > 0);
    if (target < 0) {
      let bestKey = -Infinity;
      COLOURS.forEach((_, c) => {
        if (last[c] === 0) return;
        let key = last[c] * 0.25; // more dice of it now: closer to anything
        for (const o of opts) {
          const need = o.lo.colour < 0 ? 5 : o.lo.colour === c ? o.lo.value : Infinity;
          if (need !== Infinity) key = Math.max(key, o.score - 1.2 * Math.max(0, need - last[c]) + last[c] * 0.25);
        }
        if (key > bestKey) [target, bestKey] = [c, key];
      });
    }
    let goal = 0;
    for (const o of opts) {
      if (o.lo.colour === target || o.lo.colour < 0) goal = Math.max(goal, o.score);
    }
    if (now > 0 && now >= goal && legal.includes('stop')) return 'stop';

    if (target >= 0 && last[target] > 0) {
      // all of them; when that would be every colour die of the throw (not a legal keep),
      // stopping keeps them all, else one fewer
      if (legal.includes(`keep ${COLOURS[target]}=${last[target]}`)) return `keep ${COLOURS[target]}=${last[target]}`;
      if (now > 0 && legal.includes('stop')) return 'stop';
      if (legal.includes(`keep ${COLOURS[target]}=${last[target] - 1}`)) return `keep ${COLOURS[target]}=${last[target] - 1}`;
    }
    if (target >= 0 && last[target] === 0 && now === 0 && legal.includes('chip')) return 'chip';
    if (now > 0 && legal.includes('stop')) return 'stop';
    // must set a colour die aside to throw on: the smallest keep there is
    const keeps = legal.filter((a) => a.startsWith('keep ') && !a.includes(','));
    keeps.sort((a, b) => Number(a.split('=')[1]) - Number(b.split('=')[1]));
    if (keeps.length && Number(keeps[0].split('=')[1]) === 1 && state.dice_to_throw > 1) return keeps[0];
    return legal.includes('stop') ? 'stop' : legal[0];
  }

  // The action: the best securing move by value (reclaim > flip > conquer at equal value,
  // take-five = 5), else invade the most valuable lounger, else pass.
  act(legal) {
    const rank = { reclaim: 1, flip: 0, conquer: -0.5, 'take-five': 0 };
    let best = null;
    let bestKey = -Infinity;
    for (const a of legal) {
      const [verb, name] = a.split(' ');
      if (!(verb in rank)) continue;
      const key = loungerInfo(name).value + rank[verb];
      if (key > bestKey) [best, bestKey] = [a, key];
    }
    if (best) return best;
    for (const a of legal) {
      if (!a.startsWith('invade ')) continue;
      const key = loungerInfo(a.slice(7)).value;
      if (best === null || key > bestKey) [best, bestKey] = [a, key];
    }
    return best || (legal.includes('pass') ? 'pass' : legal[0]);
  }
}

// ------------------------------------------------------------------ the connection

// One Play stream = one match.  Resolves to {goodbye, played} when the referee ends it.
function playStream(client, token, strategy) {
  return new Promise((resolve, reject) => {
    const metadata = new grpc.Metadata();
    metadata.add(TOKEN_KEY, token);
    const call = client.Play(metadata);
    let goodbye = false;
    let played = false;
    let settled = false;
    const finish = (err) => {
      if (settled) return;
      settled = true;
      if (err && err.code !== grpc.status.OK) reject(err);
      else resolve({ goodbye, played });
    };
    call.on('data', (msg) => {
      switch (msg.message) {
        case 'welcome':
          played = true;
          strategy.welcome(msg.welcome);
          // the Hello goes out after the Welcome: a stream answered by a Goodbye alone may
          // already be closed, and writing into it would fail
          call.write({ hello: { name: BOT_NAME, version: BOT_VERSION } });
          break;
        case 'request': {
          const req = msg.request;
          let action;
          try {
            action = strategy.choose(req.state, req.legal_actions);
          } catch (e) {
            process.stderr.write(`node bot: strategy failed (${e && e.stack}); answering the first legal action\n`);
            action = req.legal_actions[0];
          }
          if (!req.legal_actions.includes(action)) action = req.legal_actions[0];
          call.write({ action: { request_id: req.request_id, action } });
          break;
        }
        case 'result':
          break; // the referee closes the stream next (after a goodbye if no match follows)
        case 'goodbye':
          goodbye = true;
          break;
        default:
          break; // a message kind from a newer protocol: ignore it
      }
    });
    call.on('error', (err) => finish(err));
    call.on('status', (status) => finish(status.code === grpc.status.OK ? null : status));
    call.on('end', () => {
      call.end(); // half-close our side too
    });
  });
}

async function main() {
  const { address, token } = parseArgs(process.argv.slice(2), process.env);
  if (!address || !token) {
    process.stderr.write('usage: ARENA_TOKEN=TOKEN bot.js --address=ADDR (or ARENA_ADDRESS; --token=TOKEN also works)\n');
    return 2;
  }
  const v1 = loadProtocol();
  const client = new v1.Referee(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 4 << 20,
  });
  const strategy = new Strategy();
  let streams = 0;
  let idle = 0;
  // The first connection is tried again for a while (ARENA_CONNECT_WAIT seconds, 10 by default;
  // the referee waits 20 s for a seat): the referee may not listen yet, or its side may drop a
  // fresh connection at once beside other bots' connection floods (proto/README.md).
  const connectWait = Number(process.env.ARENA_CONNECT_WAIT || '10');
  const connectBy = Date.now() + 1000 * (Number.isFinite(connectWait) ? connectWait : 10);
  await new Promise((resolve) => client.waitForReady(connectBy, () => resolve()));
  let pause = 50;
  try {
    for (;;) {
      let outcome;
      try {
        outcome = await playStream(client, token, strategy);
      } catch (err) {
        const gone = err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.CANCELLED;
        if (streams === 0 && err.code === grpc.status.UNAVAILABLE && Date.now() + pause < connectBy) {
          await new Promise((r) => setTimeout(r, pause));
          pause = Math.min(pause * 2, 1000);
          continue;
        }
        if (streams > 0 && gone) return 0; // the referee went away after we played
        process.stderr.write(`node bot: the referee refused or dropped the stream: ${err.code} ${err.details}\n`);
        return 2;
      }
      streams += 1;
      if (outcome.goodbye) return 0; // no further match
      // no goodbye after the result: we are kept running, open the stream of the next match
      // (a stream that ended without a match should not happen: do not spin on it)
      idle = outcome.played ? 0 : idle + 1;
      if (idle >= 5) {
        process.stderr.write('node bot: the referee keeps ending streams without a match; giving up\n');
        return 1;
      }
      if (idle) await new Promise((r) => setTimeout(r, 200 * idle));
    }
  } finally {
    client.close();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`node bot: ${err && err.stack}\n`);
      process.exit(1);
    },
  );
}

module.exports = { Strategy, loungerInfo, lifeguardAfter, blocked, parseArgs };
