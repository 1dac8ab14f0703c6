"""pyads' own test server as the shadow's PLC: run by tests/pyads.rs.

pyads (3.6) ships `pyads.testserver.AdsTestServer` with `AdvancedHandler`, which PLC
programmers use in their tests. This script serves a robot file's [plc] symbols on it — the
GVL of assets/twincat/GVL_Shadow.TcGVL with the names, IEC types and units of
SymbolTable::from_robot (mm and degrees) — and runs a tiny PLC task in a thread every 10 ms:
the cycle counter +1; the commanded pose on a horizontal circle after a short hold, the
commanded lengths its inverse kinematics (|a_i - p - b_i|, the orientation held at zero), the
reported lengths the previous command, TCP pose and cable angles (seed 000 eqs. 2-3) to match;
the reaction time of the shadow's echo measured as the virtual PLC measures it (cycle - echo
at each new echo, published in nReactionCycles).

The server and its handler are pyads' own, unchanged: the variables only count the writes
clients make (the handler calls PLCVariable.write for every write by handle, by address and
in sum writes). Requests the handler cannot serve raise in its connection thread and get no
reply at all; each such request is reported.

Usage: python pyads_testserver.py ROBOT.toml [--port N] [--no-reaction] [--radius-mm R]
                                  [--period-s T] [--hold-s H]

Stdout, one JSON object per line: first {"event": "listening", "port": N, "pyads": "3.6.0"},
then {"event": "unanswered", ...} for each request that raised, and the answers to commands
read from stdin, one per line:
  restart [DOWN_MS]  stop the server (its connections closed), wait DOWN_MS (default 300), serve
                     on the same port again with fresh variables (new handles) holding the same
                     values: {"event": "restarted", ...}
  hold               hold the commanded pose where it is: {"event": "held", "pose_mm": [...]}
  stats              {"event": "stats", ...}: write counts per symbol, unanswered requests,
                     reaction times, the last values of the shadow's outputs and the commands
  quit               stop and exit (also at the end of stdin)
"""

import argparse
import json
import math
import struct
import sys
import threading
import time

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # older Pythons: the backport, if installed
    import tomli as tomllib

import pyads
from pyads.testserver import AdsTestServer, AdvancedHandler
from pyads.testserver.advanced_handler import PLCVariable
from pyads.testserver.testserver import AdsClientConnection

LREAL = pyads.constants.ADST_REAL64
UDINT = pyads.constants.ADST_UINT32
BOOL = pyads.constants.ADST_BIT
PLC_PERIOD = 0.010

out_lock = threading.Lock()


def emit(**obj):
    with out_lock:
        print(json.dumps(obj), flush=True)


# ---------------------------------------------------------------------------------- variables

WRITES = {}
UNANSWERED = []


class Counted(PLCVariable):
    """A PLC variable that counts the writes clients make; the PLC task sets .value directly."""

    def write(self, value, request=None):
        WRITES[self.name] = WRITES.get(self.name, 0) + 1
        super().write(value, request)


def lreals(values):
    return struct.pack("<%dd" % len(values), *values)


def unpack_lreals(b):
    return list(struct.unpack("<%dd" % (len(b) // 8), b))


def udint(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def unpack_udint(b):
    return struct.unpack("<I", b[:4])[0]


def array(n, m=None):
    dims = "1..%d" % n if m is None else "1..%d,1..%d" % (n, m)
    return "ARRAY [%s] OF LREAL" % dims


# ---------------------------------------------------------------------------------- the robot


class Robot:
    def __init__(self, path):
        with open(path, "rb") as f:
            doc = tomllib.load(f)
        self.frame = [[x * 1e3 for x in a] for a in doc["cables"]["frame_anchors"]]
        self.platform = [[x * 1e3 for x in b] for b in doc["cables"]["platform_anchors"]]
        self.home = [x * 1e3 for x in doc["home"][:3]]
        self.plc = doc["plc"]
        self.m = len(self.frame)

    def vectors(self, p):
        """Cable vectors a_i - p - b_i (orientation zero), mm."""
        return [[a[k] - p[k] - b[k] for k in range(3)] for a, b in zip(self.frame, self.platform)]

    def lengths(self, p):
        return [math.sqrt(sum(c * c for c in v)) for v in self.vectors(p)]

    def angles(self, p):
        """(theta_z, theta_x) per cable, degrees (CableAngles::of)."""
        out = []
        for v in self.vectors(p):
            horizontal = math.hypot(v[0], v[1])
            length = math.sqrt(sum(c * c for c in v))
            if horizontal < 1e-9 or length < 1e-9:
                out += [90.0, 90.0]
                continue
            out.append(math.degrees(math.acos(min(1.0, horizontal / length))))
            out.append(math.degrees(math.acos(max(-1.0, min(1.0, v[0] / horizontal)))))
        return out


# ---------------------------------------------------------------------------------- the PLC


class Plc:
    def __init__(self, robot, args):
        self.robot = robot
        self.args = args
        self.names = dict(robot.plc)
        counter = self.names["cycle_counter"]
        gvl = counter.rsplit(".", 1)[0] + "." if "." in counter else ""
        self.reaction_name = None if args.no_reaction else gvl + "nReactionCycles"
        self.lock = threading.Lock()
        self.cycle = 0
        self.last_echo = 0
        self.last_reaction = 0
        self.reactions = []
        self.held = None
        self.pose = list(robot.home)
        self.previous = robot.lengths(self.pose)
        m = robot.m
        lengths = robot.lengths(self.pose)
        p = self.names
        declared = [
            (p["frame_anchors"], array(m, 3), LREAL, lreals(sum(robot.frame, []))),
            (p["platform_anchors"], array(m, 3), LREAL, lreals(sum(robot.platform, []))),
            (p["lengths"], array(m), LREAL, lreals(lengths)),
            (p["cable_angles"], array(m, 2), LREAL, lreals(robot.angles(self.pose))),
            (p["tcp_pose"], array(6), LREAL, lreals(self.pose + [0.0, 0.0, 0.0])),
            (p["commanded_lengths"], array(m), LREAL, lreals(lengths)),
            (p["cycle_counter"], "UDINT", UDINT, udint(0)),
            (p["motion_enable"], "BOOL", BOOL, b"\x00"),
            (p["shadow_pose"], array(6), LREAL, lreals([0.0] * 6)),
            (p["shadow_lengths"], array(m), LREAL, lreals([0.0] * m)),
            (p["shadow_tensions"], array(m), LREAL, lreals([0.0] * m)),
            (p["shadow_cycle"], "UDINT", UDINT, udint(0)),
        ]
        if self.reaction_name:
            declared.append((self.reaction_name, "UDINT", UDINT, udint(0)))
        self.declared = declared
        self.values = {name: value for name, _, _, value in declared}
        self.vars = {}

    def handler(self):
        """A fresh AdvancedHandler holding the current values (new handles, as after a restart)."""
        handler = AdvancedHandler()
        with self.lock:
            self.vars = {}
            for name, type_name, ads_type, _ in self.declared:
                var = Counted(name, self.values[name], ads_type, type_name)
                handler.add_variable(var)
                self.vars[name] = var
        return handler

    def get(self, key):
        return self.vars[self.names[key]].value

    def set(self, name, value):
        self.vars[name].value = value
        self.values[name] = value

    def commanded_pose(self, t):
        hold = self.args.hold_s
        if t < hold:
            return list(self.robot.home), False
        phase = 2.0 * math.pi * (t - hold) / self.args.period_s
        r = self.args.radius_mm
        h = self.robot.home
        return [h[0] + r * math.sin(phase), h[1] + r * (1.0 - math.cos(phase)), h[2]], True

    def task(self):
        """One PLC cycle: read the echo, count, publish."""
        with self.lock:
            for name, var in self.vars.items():
                self.values[name] = var.value  # what clients wrote
            echo = unpack_udint(self.get("shadow_cycle"))
            cycle = self.cycle + 1
            if echo != self.last_echo and echo != 0:
                self.last_reaction = (cycle - echo) & 0xFFFFFFFF
                self.reactions.append(self.last_reaction)
                self.last_echo = echo
            self.cycle = cycle
            if self.held is None:
                self.pose, moving = self.commanded_pose(cycle * PLC_PERIOD)
            else:
                moving = False
            p = self.names
            lengths = self.robot.lengths(self.pose)
            self.set(p["lengths"], lreals(self.previous))
            self.set(p["commanded_lengths"], lreals(lengths))
            self.previous = lengths
            self.set(p["tcp_pose"], lreals(self.pose + [0.0, 0.0, 0.0]))
            self.set(p["cable_angles"], lreals(self.robot.angles(self.pose)))
            self.set(p["motion_enable"], b"\x01" if moving else b"\x00")
            self.set(p["cycle_counter"], udint(cycle))
            if self.reaction_name:
                self.set(self.reaction_name, udint(self.last_reaction))

    def run(self, stop):
        deadline = time.monotonic()
        while not stop.is_set():
            self.task()
            deadline += PLC_PERIOD
            now = time.monotonic()
            if deadline < now - 10 * PLC_PERIOD:
                deadline = now  # fell far behind: skip rather than burst
            time.sleep(max(0.0, deadline - now))

    def hold(self):
        with self.lock:
            self.held = list(self.pose)
            return self.held

    def stats(self):
        with self.lock:
            r = sorted(self.reactions)

            def quantile(q):
                if not r:
                    return None
                rank = min(len(r), max(1, math.ceil(q * len(r))))
                return r[rank - 1]

            p = self.names
            return {
                "cycle": self.cycle,
                "writes": dict(WRITES),
                "unanswered": len(UNANSWERED),
                "reaction": {
                    "samples": len(r),
                    "p50": quantile(0.5),
                    "p99": quantile(0.99),
                    "max": r[-1] if r else None,
                },
                "held_pose_mm": self.held,
                "shadow_pose": unpack_lreals(self.get("shadow_pose")),
                "shadow_lengths": unpack_lreals(self.get("shadow_lengths")),
                "shadow_tensions": unpack_lreals(self.get("shadow_tensions")),
                "shadow_cycle": unpack_udint(self.get("shadow_cycle")),
                "cmd_lengths": unpack_lreals(self.get("commanded_lengths")),
                "symbols": [name for name, _, _, _ in self.declared],
            }


# ---------------------------------------------------------------------------------- main


def report_unanswered(args):
    """A handler that raises kills its connection thread: the request gets no reply."""
    if isinstance(args.thread, AdsClientConnection) and args.exc_type is KeyError:
        UNANSWERED.append(str(args.exc_value))
        emit(event="unanswered", error=str(args.exc_value), count=len(UNANSWERED))
    elif not isinstance(args.exc_value, (OSError, ValueError)):
        # Sockets closed under a thread by stop() are expected; anything else is news.
        emit(event="thread_error", error=repr(args.exc_value))


def serve(plc, port):
    server = AdsTestServer(handler=plc.handler(), ip_address="127.0.0.1", port=port, logging=False)
    server.start()
    return server, server.server.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("robot", help="robot file (TOML) whose [plc] symbols are served")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--no-reaction", action="store_true", help="leave nReactionCycles out")
    parser.add_argument("--radius-mm", type=float, default=30.0)
    parser.add_argument("--period-s", type=float, default=4.0)
    parser.add_argument("--hold-s", type=float, default=0.2)
    args = parser.parse_args()

    threading.excepthook = report_unanswered
    plc = Plc(Robot(args.robot), args)
    server, port = serve(plc, args.port)
    stop = threading.Event()
    task = threading.Thread(target=plc.run, args=(stop,), daemon=True)
    task.start()
    emit(event="listening", port=port, pyads=pyads.__version__)
    restarts = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "restart":
            down_ms = float(words[1]) if len(words) > 1 else 300.0
            server.stop()
            time.sleep(down_ms / 1000.0)
            server, port = serve(plc, port)
            restarts += 1
            emit(event="restarted", port=port, restarts=restarts)
        elif command == "hold":
            emit(event="held", pose_mm=plc.hold())
        elif command == "stats":
            emit(event="stats", restarts=restarts, **plc.stats())
        elif command == "quit":
            break
        else:
            emit(event="error", error="unknown command %r" % command)
    stop.set()
    task.join()
    server.stop()


if __name__ == "__main__":
    main()
