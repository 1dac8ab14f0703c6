"""Checks an MCAP recording cdpr wrote with an independent reader (the PyPI `mcap` package,
protobuf decoded from the schemas in the file by `mcap-protobuf-support`) against the CSV of
the same run.

    python check_mcap.py RUN.mcap RUN.csv|- [--extra a,b,c] [--cycle]

Checks every channel (topic, schema name and encoding, message encoding), the message counts
(/run and /tf: one per CSV row; /scene: one per 1/30 s slot of simulated time; /shadow/cycle
with --cycle), every /run value against the CSV's bit for bit (the CSV holds shortest
round-trip numbers, parsed here with float(), which is exact), /tf against the pose, each
cable of each /scene against the CSV's length, the `cdpr` metadata and the robot attachments.
With `-` for the CSV (a run with no CSV twin: a shadow's), the rows are the /run samples'
own and the other channels are checked against them. Prints a JSON summary; exits 1 naming
the first difference.
"""

import csv
import json
import math
import struct
import sys
import tomllib

from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

SCENE_RATE_HZ = 30


def fail(message):
    print(f"check_mcap: {message}", file=sys.stderr)
    sys.exit(1)


def same(a, b):
    """Bit for bit (-0.0 differs from 0.0)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


def time_ns(t):
    # As cdpr: round half away from zero, t > 0.
    return math.floor(t * 1e9 + 0.5) if t > 0 else 0


def numbers(decoded):
    """A /run sample's numbers in the CSV's column order."""
    got = [decoded.t, *decoded.pose_cmd, *decoded.pose]
    for i in range(len(decoded.tension)):
        got += [decoded.length_cmd[i], decoded.length[i], decoded.tension[i]]
    got += [v for pair in zip(decoded.actuator_cmd, decoded.actuator) for v in pair]
    got += [v for pair in zip(decoded.leg_length, decoded.leg_force) for v in pair]
    return got


def rows_of_mcap(mcap_path):
    """The CSV the recording's /run samples make (for a run with no CSV twin, e.g. a shadow's:
    the other channels are then checked against /run)."""
    with open(mcap_path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        meta = {m.name: m.metadata for m in reader.iter_metadata()}.get("cdpr") or fail("no metadata")
        extra = meta["extra_columns"].split(",") if meta["extra_columns"] else []
        rows = [meta["columns"].split(",") + ["segment"] + extra]
        for _, _, _, decoded in reader.iter_decoded_messages(topics=["/run"]):
            rows.append([repr(v) for v in numbers(decoded)] + [decoded.segment] + [repr(v) for v in decoded.extra])
    return rows


def main():
    args = sys.argv[1:]
    extra = []
    cycle = "--cycle" in args
    if "--extra" in args:
        k = args.index("--extra")
        extra = args[k + 1].split(",")
        del args[k : k + 2]
    args = [a for a in args if a != "--cycle"]
    mcap_path, csv_path = args

    if csv_path == "-":
        rows = rows_of_mcap(mcap_path)
    else:
        with open(csv_path, newline="") as f:
            rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    segment_at = header.index("segment")
    numeric = header[:segment_at]
    if header[segment_at + 1 :] != extra:
        fail(f"CSV extra columns {header[segment_at + 1:]} != {extra}")
    cables = sum(1 for c in numeric if c.startswith("tension_"))

    expected_topics = {
        "/run": "runsample.RunSample",
        "/tf": "foxglove.FrameTransform",
        "/scene": "foxglove.SceneUpdate",
    }
    if cycle:
        expected_topics["/shadow/cycle"] = "shadowcycle.ShadowCycle"

    with open(mcap_path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        if summary is None:
            fail("no summary section")
        topics = {}
        for channel in summary.channels.values():
            schema = summary.schemas[channel.schema_id]
            topics[channel.topic] = (schema.name, schema.encoding, channel.message_encoding)
        want = {t: (s, "protobuf", "protobuf") for t, s in expected_topics.items()}
        if topics != want:
            fail(f"channels {topics} != {want}")
        counts = {
            summary.channels[c].topic: n
            for c, n in summary.statistics.channel_message_counts.items()
        }

        slots = {time_ns(float(r[0])) * SCENE_RATE_HZ // 1_000_000_000 for r in body}
        want_counts = {"/run": len(body), "/tf": len(body), "/scene": len(slots)}
        for topic, n in want_counts.items():
            if counts.get(topic) != n:
                fail(f"{topic}: {counts.get(topic)} messages, expected {n}")
        if cycle and counts.get("/shadow/cycle", 0) < 1:
            fail("no /shadow/cycle message")

        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        meta = metadata.get("cdpr")
        if meta is None:
            fail(f"no `cdpr` metadata record: {list(metadata)}")
        if meta["columns"].split(",") != numeric:
            fail(f"metadata columns {meta['columns']} != the CSV's {numeric}")
        if (meta["extra_columns"].split(",") if meta["extra_columns"] else []) != extra:
            fail(f"metadata extra columns {meta['extra_columns']} != {extra}")
        for key in ("description", "robot", "cdpr_version"):
            if not meta.get(key):
                fail(f"metadata `{key}` missing: {meta}")
        attachments = {a.name: a for a in reader.iter_attachments()}
        # The robot as simulated, always; its file when it came from one (a shadow's robot
        # read from the PLC has none).
        if "robot.json" not in attachments:
            fail(f"attachments {list(attachments)}")
        robot_json = json.loads(attachments["robot.json"].data)
        if robot_json["name"] != meta["robot"]:
            fail(f"robot.json names {robot_json['name']}, the metadata {meta['robot']}")
        if "robot.toml" in attachments:
            robot_file = tomllib.loads(attachments["robot.toml"].data.decode())
            if robot_file.get("name") != meta["robot"]:
                fail(f"robot.toml names {robot_file.get('name')}, the metadata {meta['robot']}")

        run_k = tf_k = scene_k = 0
        times = [float(r[0]) for r in body]
        row_at_ns = {}
        for k, t in enumerate(times):
            row_at_ns.setdefault(time_ns(t), k)
        last_slot = None
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            topic = channel.topic
            if topic == "/run":
                row = body[run_k]
                values = [float(v) for v in row[:segment_at]]
                got = numbers(decoded)
                if len(got) != len(values):
                    fail(f"/run #{run_k}: {len(got)} numbers, the CSV row {len(values)}")
                for name, a, b in zip(numeric, got, values):
                    if not same(a, b):
                        fail(f"/run #{run_k} `{name}`: {a!r} != the CSV's {b!r}")
                if decoded.segment != row[segment_at]:
                    fail(f"/run #{run_k} segment {decoded.segment!r} != {row[segment_at]!r}")
                want_extra = [float(v) for v in row[segment_at + 1 :]]
                if len(decoded.extra) != len(want_extra) or not all(
                    same(a, b) for a, b in zip(decoded.extra, want_extra)
                ):
                    fail(f"/run #{run_k} extra {list(decoded.extra)} != {want_extra}")
                if message.log_time != time_ns(values[0]):
                    fail(f"/run #{run_k}: log time {message.log_time} ns, t = {values[0]} s")
                run_k += 1
            elif topic == "/tf":
                row = [float(v) for v in body[tf_k][:segment_at]]
                x, y, z = row[numeric.index("x")], row[numeric.index("y")], row[numeric.index("z")]
                tr = decoded.translation
                if not (same(tr.x, x) and same(tr.y, y) and same(tr.z, z)):
                    fail(f"/tf #{tf_k}: {tr} != ({x}, {y}, {z})")
                if (decoded.parent_frame_id, decoded.child_frame_id) != ("world", "platform"):
                    fail(f"/tf frames {decoded.parent_frame_id} -> {decoded.child_frame_id}")
                q = decoded.rotation
                norm = math.sqrt(q.x**2 + q.y**2 + q.z**2 + q.w**2)
                if abs(norm - 1) > 1e-12:
                    fail(f"/tf #{tf_k}: |q| = {norm}")
                tf_k += 1
            elif topic == "/scene":
                slot = message.log_time * SCENE_RATE_HZ // 1_000_000_000
                if slot == last_slot:
                    fail(f"/scene: two scenes in slot {slot}")
                last_slot = slot
                k = row_at_ns.get(message.log_time)
                if k is None:
                    fail(f"/scene at {message.log_time} ns: no CSV row at that time")
                ids = [e.id for e in decoded.entities]
                if ids != ["frame", "platform", "cables"]:
                    fail(f"/scene entities {ids}")
                lines = decoded.entities[2].lines
                if len(lines) != cables:
                    fail(f"/scene: {len(lines)} cable lines, {cables} cables")
                # The physics' length comes from its own bodies (a few nm from the line drawn
                # from the recorded pose); a wrong anchor or rotation is millimetres off.
                for i, line in enumerate(lines):
                    a, b = line.points
                    drawn = math.dist((a.x, a.y, a.z), (b.x, b.y, b.z))
                    recorded = float(body[k][numeric.index(f"length_{i + 1}")])
                    if abs(drawn - recorded) > 1e-6:
                        fail(f"/scene at t = {times[k]}: cable {i + 1} drawn {drawn} m, recorded {recorded} m")
                scene_k += 1
        if (run_k, tf_k, scene_k) != (len(body), len(body), len(slots)):
            fail(f"decoded {run_k} /run, {tf_k} /tf, {scene_k} /scene")

    print(json.dumps({"rows": len(body), "counts": counts, "metadata": meta, "attachments": sorted(attachments)}))


if __name__ == "__main__":
    main()
