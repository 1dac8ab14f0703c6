// An independent client of the live view (`--foxglove`): Foxglove's own @foxglove/ws-protocol
// client over the `ws` package, messages decoded with protobufjs from the schemas the server
// advertises (a FileDescriptorSet, base64). Run by the Rust tests (crates/cdpr-ads/tests/
// foxglove_client.rs); prints one JSON object on stdout, exits non-zero naming what failed.
//
//   node foxglove_client_check.js URL SECONDS [read|stall|count]
//
// read: subscribes to every channel, decodes every message for SECONDS, and reports the
// channels as advertised, per topic the count, the rate over the window (the first 0.5 s after
// the first message left out), whether log times only grew, and the decoded /run samples'
// checks (times growing, the pose beside the commanded one).
// count: as read, but counts the messages without decoding them (a client whose CPU is not
// this machine's, as the Foxglove app on another screen: for measuring the server's cost).
// stall: subscribes to every channel, then stops reading its socket for SECONDS (a client
// that never reads), and reports the messages it had taken before.

"use strict";
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const protobuf = require("protobufjs");
const descriptor = require("protobufjs/ext/descriptor");

const [url, secondsText, mode = "read"] = process.argv.slice(2);
const seconds = Number(secondsText);
if (!url || !(seconds > 0) || !["read", "stall", "count"].includes(mode)) {
  console.error("usage: node foxglove_client_check.js URL SECONDS [read|stall|count]");
  process.exit(2);
}

// The foxglove crate's server (0.30) speaks `foxglove.sdk.v1` (inline schemas), as the
// Foxglove app and recent Lichtblick do; it refuses `foxglove.websocket.v1`.
const ws = new WebSocket(url, ["foxglove.sdk.v1"]);
const client = new FoxgloveClient({ ws });
const channels = new Map(); // id -> { channel, type, subscription }
const topics = {}; // topic -> { count, times: [receive ms], logTimes growing, ... }
const run = { decoded: 0, timeGrew: true, lastT: -Infinity, maxPositionError: 0, first: null, last: null, cables: null, extraLen: null };
let serverInfo = null;
let firstMessageAt = null;
let failed = null;

function fail(what) {
  if (!failed) failed = what;
}

function typeOf(channel) {
  if (channel.encoding !== "protobuf" || channel.schemaEncoding !== "protobuf") {
    fail(`${channel.topic}: encoding ${channel.encoding}/${channel.schemaEncoding}, not protobuf`);
    return null;
  }
  try {
    const set = descriptor.FileDescriptorSet.decode(Buffer.from(channel.schema, "base64"));
    const root = protobuf.Root.fromDescriptor(set);
    return root.lookupType(channel.schemaName);
  } catch (e) {
    fail(`${channel.topic}: schema ${channel.schemaName} does not load: ${e.message}`);
    return null;
  }
}

client.on("serverInfo", (info) => {
  serverInfo = { name: info.name, capabilities: info.capabilities };
});
client.on("error", (e) => fail(`client error: ${e && e.message ? e.message : e}`));
client.on("advertise", (advertised) => {
  for (const channel of advertised) {
    const type = typeOf(channel);
    const subscription = client.subscribe(channel.id);
    channels.set(channel.id, { channel, type, subscription });
    topics[channel.topic] = { count: 0, times: [], logTimesGrew: true, lastLogTime: -1n };
  }
  if (mode === "stall") {
    // Subscribed: from now on nothing more is read, the kernel's buffers fill, the server's
    // queue for this client fills.
    setTimeout(() => ws._socket && ws._socket.pause(), 200);
  }
});
client.on("message", ({ subscriptionId, timestamp, data }) => {
  const now = performance.now();
  if (firstMessageAt === null) firstMessageAt = now;
  const entry = [...channels.values()].find((c) => c.subscription === subscriptionId);
  if (!entry) return fail(`a message on unknown subscription ${subscriptionId}`);
  const t = topics[entry.channel.topic];
  t.count += 1;
  t.times.push(now);
  if (timestamp <= t.lastLogTime) t.logTimesGrew = false;
  t.lastLogTime = timestamp;
  if (!entry.type || mode === "count") return;
  let message;
  try {
    message = entry.type.decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  } catch (e) {
    return fail(`${entry.channel.topic}: a message does not decode: ${e.message}`);
  }
  if (entry.channel.topic === "/run") {
    const o = entry.type.toObject(message, { defaults: true, arrays: true });
    run.decoded += 1;
    if (!(o.t > run.lastT)) run.timeGrew = false;
    run.lastT = o.t;
    // Field names as the schema spells them (protobufjs keeps them from a descriptor).
    const field = (name) => o[name] ?? o[name.replace(/_(.)/g, (_m, c) => c.toUpperCase())];
    const [poseCmd, pose] = [field("pose_cmd"), field("pose")];
    if (!poseCmd || !pose) return fail(`/run: no pose_cmd/pose fields in ${Object.keys(o)}`);
    const d = [0, 1, 2].map((k) => pose[k] - poseCmd[k]);
    run.maxPositionError = Math.max(run.maxPositionError, Math.hypot(...d));
    const keep = { t: o.t, pose_cmd: poseCmd, pose, length_cmd: field("length_cmd"), length: o.length, tension: o.tension, extra: o.extra };
    if (!run.first) run.first = keep;
    run.last = keep;
    run.cables = o.length.length;
    run.extraLen = o.extra.length;
  } else if (entry.channel.topic === "/scene" && !topics["/scene"].entities) {
    const o = entry.type.toObject(message, { defaults: true, arrays: true });
    topics["/scene"].entities = o.entities.map((e) => ({ id: e.id, frame: e.frame_id ?? e.frameId, lines: e.lines.length, spheres: e.spheres.length, cubes: e.cubes.length }));
  } else if (entry.channel.topic === "/tf" && !topics["/tf"].frames) {
    const o = entry.type.toObject(message, { defaults: true });
    topics["/tf"].frames = [o.parent_frame_id ?? o.parentFrameId, o.child_frame_id ?? o.childFrameId];
  }
});

function rate(times) {
  // Messages per second after the first 0.5 s (the subscriptions settle).
  const from = firstMessageAt + 500;
  const window = times.filter((x) => x >= from);
  if (window.length < 2) return 0;
  return ((window.length - 1) * 1000) / (window[window.length - 1] - window[0]);
}

ws.on("open", () => setTimeout(finish, seconds * 1000));
ws.on("unexpected-response", (_req, res) => {
  console.error(`the server refused the WebSocket handshake: HTTP ${res.statusCode}`);
  process.exit(1);
});
ws.on("error", (e) => {
  console.error(`cannot connect to ${url}: ${e.message}`);
  process.exit(1);
});

function finish() {
  // A clean close (the server logs an abrupt one as an error).
  client.close();
  const report = {
    mode,
    server: serverInfo,
    subprotocol: ws.protocol,
    channels: [...channels.values()].map(({ channel }) => ({
      topic: channel.topic,
      encoding: channel.encoding,
      schemaName: channel.schemaName,
      schemaEncoding: channel.schemaEncoding,
      metadata: channel.metadata || null,
    })),
    topics: Object.fromEntries(
      Object.entries(topics).map(([topic, t]) => [
        topic,
        { count: t.count, rate: rate(t.times), logTimesGrew: t.logTimesGrew, entities: t.entities, frames: t.frames },
      ]),
    ),
    run,
    failed,
  };
  process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(failed ? 1 : 0));
  if (failed) console.error(failed);
}
