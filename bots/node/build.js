#!/usr/bin/env node
// Build the single-file Node bot: bot.js with @grpc/grpc-js, @grpc/proto-loader (and what they
// need) bundled in by esbuild, and arena.proto embedded as a FileDescriptorSet, so the one file
// runs with nothing but `node` (>= 18): that is what `arena bots add` stores and what the sandbox
// can run (a registered bot is its file alone).
//
//   npm ci --prefix bots/node && node bots/node/build.js [OUT]   (default OUT: bots/node/dist/nodebot.js)
'use strict';

const fs = require('fs');
const path = require('path');
const esbuild = require('esbuild');
const protoLoader = require('@grpc/proto-loader');

const HERE = __dirname;
const PROTO = path.join(HERE, '..', '..', 'proto', 'arena', 'v1', 'arena.proto');

function varint(n) {
  const out = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

// google.protobuf.FileDescriptorSet { repeated FileDescriptorProto file = 1; } of arena.proto
function descriptorSet() {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true });
  const files = definition['arena.v1.BotMessage'].fileDescriptorProtos;
  return Buffer.concat(files.flatMap((f) => [Buffer.from([0x0a]), varint(f.length), Buffer.from(f)]));
}

async function build(out) {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const embedded = descriptorSet().toString('base64');
  await esbuild.build({
    entryPoints: [path.join(HERE, 'bot.js')],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    minify: true,
    legalComments: 'none',
    logLevel: 'error',
    banner: {
      js: `// Pool Arena sample bot (bots/node/bot.js), built by bots/node/build.js: one self-contained file.\nglobalThis.ARENA_PROTO_DESCRIPTOR_SET = ${JSON.stringify(embedded)};`,
    },
  });
  fs.chmodSync(out, 0o755);
  return out;
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] || path.join(HERE, 'dist', 'nodebot.js'));
  build(out).then(
    (file) => process.stdout.write(`${file}\n`),
    (err) => {
      process.stderr.write(`build failed: ${err && err.stack}\n`);
      process.exit(1);
    },
  );
}

module.exports = { build };
