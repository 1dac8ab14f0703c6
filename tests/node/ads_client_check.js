// ads-client (jisotalo, 2.1.0) against the virtual PLC, with its default options: the README's
// calls, each checked. Run by crates/cdpr-ads/tests/node_ads_client.rs.
//
// Usage: node ads_client_check.js HOST PORT NETID [ADS_PORT [direct|router]]
// `direct` (the default) connects as a Linux machine without a TwinCAT router does
// (ads-client README, "Setup 3 - Connect from any Node.js system"): its own AmsNetId and ADS
// port set by hand, the PLC's address as the router. `router` gives only the target and the
// router's address, as to a local TwinCAT (README "Setup 4"): ads-client asks the router for
// its AMS address. No allowHalfOpen, rawClient or disabled feature either way. Prints one
// JSON object (the calls that passed and what they saw); exits 1 with a message on any
// failure.
'use strict';

const { Client } = require('ads-client');

const [host, port, netId, adsPort, mode = 'direct'] = process.argv.slice(2);
if (!host || !port || !netId) {
  console.error('usage: node ads_client_check.js HOST PORT NETID [ADS_PORT]');
  process.exit(2);
}

const out = { passed: [] };
const check = (cond, what) => {
  if (!cond) throw new Error(`check failed: ${what}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const adsCode = (err) => {
  for (let e = err; e; e = e.parentError) {
    if (e.adsError && e.adsError.errorCode) return e.adsError.errorCode;
  }
  return undefined;
};

async function step(name, body) {
  try {
    const v = await body();
    out.passed.push(name);
    return v;
  } catch (err) {
    throw new Error(`${name}: ${err && err.stack ? err.stack : err}`);
  }
}

async function main() {
  const target = {
    targetAmsNetId: netId,
    targetAdsPort: adsPort ? Number(adsPort) : 851,
    routerAddress: host,
    routerTcpPort: Number(port),
  };
  const local = mode === 'router' ? {} : { localAmsNetId: '10.0.0.2.1.1', localAdsPort: 32750 };
  const client = new Client({ ...local, ...target });
  out.local = await step('connect', async () => {
    const res = await client.connect();
    check(res.connected, 'connected');
    return `${res.localAmsNetId}:${res.localAdsPort}`;
  });
  try {
    out.runtimeState = await step('readPlcRuntimeState', async () => {
      const s = await client.readPlcRuntimeState();
      check(s.adsState === 5, `PLC runtime in Run, got ${s.adsStateStr}`);
      return s.adsStateStr;
    });
    out.systemState = await step('readTcSystemState', async () => {
      const s = await client.readTcSystemState();
      check(s.adsState === 5, `TwinCAT system in Run, got ${s.adsStateStr}`);
      return s.adsStateStr;
    });
    out.deviceInfo = await step('readDeviceInfo', async () => (await client.readDeviceInfo()).deviceName);

    out.cycle = await step('readValue UDINT', async () => {
      const r = await client.readValue('GVL_Shadow.nCycle');
      check(typeof r.value === 'number', `a number, got ${r.value}`);
      return r.value;
    });
    out.cmdLengths = await step('readValue ARRAY OF LREAL', async () => {
      const r = await client.readValue('GVL_Shadow.aCmdLengths');
      check(Array.isArray(r.value) && r.value.length === 8, `8 lengths, got ${JSON.stringify(r.value)}`);
      check(r.value.every((v) => v > 100), `lengths in mm, got ${r.value}`);
      return r.value;
    });
    out.frameAnchors = await step('readValue 2-D ARRAY', async () => {
      const r = await client.readValue('GVL_Shadow.aFrameAnchors');
      check(r.value.length === 8 && r.value[0].length === 3, `8 × 3, got ${JSON.stringify(r.value)}`);
      return r.value;
    });
    out.enable = await step('readValue BOOL', async () => {
      const r = await client.readValue('GVL_Shadow.bMotionEnable');
      check(typeof r.value === 'boolean', `a boolean, got ${r.value}`);
      return r.value;
    });

    await step('writeValue UDINT', async () => {
      await client.writeValue('GVL_Shadow.nShadowCycle', 4242);
      const r = await client.readValue('GVL_Shadow.nShadowCycle');
      check(r.value === 4242, `4242 back, got ${r.value}`);
    });
    await step('writeValue ARRAY OF LREAL', async () => {
      const tensions = [10, 11, 12, 13, 14, 15, 16, 17.5];
      await client.writeValue('GVL_Shadow.aShadowTensions', tensions);
      const r = await client.readValue('GVL_Shadow.aShadowTensions');
      check(JSON.stringify(r.value) === JSON.stringify(tensions), `tensions back, got ${r.value}`);
    });
    out.protectedWrite = await step('writeValue of a PLC-owned symbol is refused', async () => {
      let code;
      try {
        await client.writeValue('GVL_Shadow.aCmdLengths', [1, 2, 3, 4, 5, 6, 7, 8]);
      } catch (err) {
        code = adsCode(err);
      }
      check(code === 0x704, `ADS error 0x704, got ${code}`);
      return code;
    });

    out.notified = await step('subscribeValue', async () => {
      const got = [];
      const sub = await client.subscribeValue('GVL_Shadow.nCycle', (data) => got.push(data.value), 10, false);
      const deadline = Date.now() + 3000;
      while (got.length < 10 && Date.now() < deadline) await sleep(20);
      await sub.unsubscribe();
      check(got.length >= 10, `10 notifications in 3 s, got ${got.length}`);
      check(got.every((v, k) => k === 0 || v === got[k - 1] + 1), `one per PLC cycle: ${got}`);
      return got.length;
    });
    await step('subscribeValue on change', async () => {
      const got = [];
      const sub = await client.subscribeValue('GVL_Shadow.nShadowCycle', (data) => got.push(data.value));
      await sleep(300);
      await client.writeValue('GVL_Shadow.nShadowCycle', 4343);
      const deadline = Date.now() + 3000;
      while (!got.includes(4343) && Date.now() < deadline) await sleep(20);
      await sub.unsubscribe();
      check(got.includes(4343), `the change notified, got ${got}`);
    });

    out.handle = await step('createVariableHandle', async () => {
      const h = await client.createVariableHandle('GVL_Shadow.aCmdLengths');
      check(h.size === 64, `size 64, got ${h.size}`);
      check(h.dataType === 'ARRAY [1..8] OF LREAL', `type, got ${h.dataType}`);
      const raw = await client.readRawByHandle(h);
      check(raw.byteLength === 64, `64 bytes by handle, got ${raw.byteLength}`);
      await client.deleteVariableHandle(h);
      return h.dataType;
    });
    await step('createVariableHandleMulti', async () => {
      const hs = await client.createVariableHandleMulti(['GVL_Shadow.nCycle', 'GVL_Shadow.aTcpPose']);
      check(hs.every((h) => h.success), `every handle, got ${JSON.stringify(hs)}`);
      check(hs[1].handle.size === 48, `aTcpPose 48 bytes, got ${hs[1].handle.size}`);
      await client.deleteVariableHandleMulti(hs.map((h) => h.handle));
    });

    out.symbol = await step('getSymbol', async () => {
      const s = await client.getSymbol('GVL_Shadow.aTcpPose');
      check(s.type === 'ARRAY [1..6] OF LREAL' && s.size === 48, `symbol, got ${JSON.stringify(s)}`);
      return s.type;
    });
    await step('getDataType', async () => {
      const t = await client.getDataType('ARRAY [1..8,1..3] OF LREAL');
      check(t.size === 8 && t.adsDataType === 5, `LREAL elements, got ${JSON.stringify(t)}`);
      check(t.arrayInfos.length === 2 && t.arrayInfos[1].length === 3, `dims, got ${JSON.stringify(t.arrayInfos)}`);
    });
    out.symbols = await step('getSymbols', async () => Object.keys(await client.getSymbols()).length);
    out.dataTypes = await step('getDataTypes', async () => Object.keys(await client.getDataTypes()).length);
  } finally {
    await step('disconnect', () => client.disconnect());
  }
}

main()
  .then(() => {
    console.log(JSON.stringify(out));
    process.exit(0);
  })
  .catch((err) => {
    console.error(`ads-client check failed after ${out.passed.length} calls (${out.passed.join(', ')}):\n${err.message}`);
    process.exit(1);
  });
