"""pyads (Beckhoff's AdsLib underneath) against the virtual PLC: run by tests/pyads.rs.

Usage: python pyads_client.py HOST:PORT
Prints one JSON object with what it read; the Rust test checks it against its own numbers.
"""

import json
import sys
import threading
import time

import pyads

endpoint = sys.argv[1]
out = {"pyads": pyads.__version__}

plc = pyads.Connection("127.0.0.1.1.1", pyads.PORT_TC3PLC1, endpoint)
plc.open()
try:
    out["state"] = list(plc.read_state())
    name, version = plc.read_device_info()
    out["device_name"] = name
    out["version"] = [version.version, version.revision, version.build]

    # Read by name with automatic type detection (0xF009, then handle 0xF003 / 0xF005 / 0xF006).
    out["cmd_lengths"] = plc.read_by_name("GVL_Shadow.aCmdLengths")
    out["cycle"] = plc.read_by_name("GVL_Shadow.nCycle")
    out["enable"] = plc.read_by_name("GVL_Shadow.bMotionEnable")
    # Quirk: pyads' type regex knows only 1-D arrays, so TwinCAT's "ARRAY [1..8,1..3] OF LREAL"
    # needs its type spelled out (a flat 24-element LREAL array).
    out["frame_anchors"] = plc.read_by_name("GVL_Shadow.aFrameAnchors", pyads.PLCTYPE_LREAL * 24)
    out["anchor_2_3"] = plc.read_by_name("GVL_Shadow.aFrameAnchors[2,3]")

    # Write by name, with and without an explicit type.
    tensions = [10.0 + k for k in range(8)]
    plc.write_by_name("GVL_Shadow.aShadowTensions", tensions, pyads.PLCTYPE_LREAL * 8)
    plc.write_by_name("GVL_Shadow.nShadowCycle", 4242)
    out["tensions_back"] = plc.read_by_name("GVL_Shadow.aShadowTensions")

    # Sum read (0xF080 by group/offset from the symbol info) and sum write (0xF081).
    many = plc.read_list_by_name(
        ["GVL_Shadow.aCmdLengths", "GVL_Shadow.nCycle", "GVL_Shadow.bMotionEnable",
         "GVL_Shadow.nShadowCycle"])
    out["sum_read"] = many
    errors = plc.write_list_by_name({"GVL_Shadow.nShadowCycle": 7, "GVL_Shadow.aShadowPose": [1.0, 2.0, 3.0, 0.0, 0.0, 0.0]})
    out["sum_write"] = errors
    out["echo_after_sum_write"] = plc.read_by_name("GVL_Shadow.nShadowCycle")

    # A cyclic notification on the PLC cycle counter (100 ns units on the wire: 10 ms).
    got = []
    lock = threading.Lock()

    @plc.notification(pyads.PLCTYPE_UDINT)
    def on_cycle(handle, name, timestamp, value):
        with lock:
            got.append(value)

    attr = pyads.NotificationAttrib(4, pyads.ADSTRANS_SERVERCYCLE, 0, 10)
    handles = plc.add_device_notification("GVL_Shadow.nCycle", attr, on_cycle)
    deadline = time.time() + 3.0
    while time.time() < deadline:
        with lock:
            if len(got) >= 5:
                break
        time.sleep(0.01)
    plc.del_device_notification(*handles)
    with lock:
        out["notified"] = list(got)

    # Unknown symbol: ADS error 0x710 = 1808.
    try:
        plc.read_by_name("GVL_Shadow.nope", pyads.PLCTYPE_INT)
        out["unknown_symbol_error"] = None
    except pyads.ADSError as e:
        out["unknown_symbol_error"] = e.err_code

    # What the PLC task owns is read-only to clients: ADS error 0x704 = 1796.
    try:
        plc.write_by_name("GVL_Shadow.aCmdLengths", [0.0] * 8, pyads.PLCTYPE_LREAL * 8)
        out["protected_write_error"] = None
    except pyads.ADSError as e:
        out["protected_write_error"] = e.err_code

    # Symbol version (0xF008) and the runtime's state (0xF100: ADS state, device state).
    out["symbol_version"] = plc.read(0xF008, 0, pyads.PLCTYPE_BYTE)
    out["runtime_state"] = plc.read(0xF100, 0, pyads.PLCTYPE_UDINT)

    # The system service (AMS port 10000): Run.
    system = pyads.Connection("127.0.0.1.1.1", 10000, endpoint)
    system.open()
    try:
        out["system_state"] = list(system.read_state())
    finally:
        system.close()
finally:
    plc.close()

print(json.dumps(out))
