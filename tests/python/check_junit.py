"""Reads a `cdpr test` JUnit file with junitparser (an independent JUnit reader) and each
scenario's record with pandas' default reader; prints one JSON object:

{"tests": N, "failures": N, "errors": N,
 "suites": [{"name", "tests", "failures", "errors", "record", "attachment",
             "cases": [{"name", "result": "passed"|"failure"|"error", "message"}],
             "record_figures": {"max_tension", "max_tension_t", "max_tension_cable",
                                "first_slack_t", "first_slack_cable", "max_error",
                                "max_error_t", "rows"}}]}

The record's figures are computed here from its columns (tension_1…, x_cmd…, x…), not by
cdpr, so that a test can compare the verdicts' numbers with them.
"""
import json
import math
import re
import sys

import junitparser
import pandas as pd


def figures(path):
    frame = pd.read_csv(path)
    tensions = [c for c in frame.columns if re.fullmatch(r"tension_\d+", c)]
    t = frame["t"]
    stacked = frame[tensions]
    row_max = stacked.max(axis=1)
    k = int(row_max.idxmax())
    slack = stacked.le(1e-3).any(axis=1)
    first_slack = int(slack.idxmax()) if slack.any() else None
    error = ((frame["x"] - frame["x_cmd"]) ** 2 + (frame["y"] - frame["y_cmd"]) ** 2
             + (frame["z"] - frame["z_cmd"]) ** 2) ** 0.5
    e = int(error.idxmax())
    out = {
        "rows": len(frame),
        "max_tension": float(row_max[k]),
        "max_tension_t": float(t[k]),
        "max_tension_cable": int(stacked.loc[k].astype(float).idxmax().split("_")[1]),
        "max_error": float(error[e]),
        "max_error_t": float(t[e]),
        "rms_error": float(math.sqrt((error ** 2).mean())),
        "first_slack_t": None,
        "first_slack_cable": None,
    }
    if first_slack is not None:
        out["first_slack_t"] = float(t[first_slack])
        row = stacked.loc[first_slack]
        out["first_slack_cable"] = int(next(c for c in tensions if row[c] <= 1e-3).split("_")[1])
    return out


def main(path):
    xml = junitparser.JUnitXml.fromfile(path)
    report = {"tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "suites": []}
    for suite in xml:
        properties = {p.name: p.value for p in suite.properties()}
        system_out = suite.child(junitparser.SystemOut)
        out = (system_out.text if system_out is not None else None) or ""
        attachment = re.search(r"\[\[ATTACHMENT\|(.*?)\]\]", out)
        cases = []
        for case in suite:
            result = "passed"
            message = None
            for r in case.result:
                if isinstance(r, junitparser.Failure):
                    result, message = "failure", r.message
                elif isinstance(r, junitparser.Error):
                    result, message = "error", r.message
            cases.append({"name": case.name, "result": result, "message": message,
                          "classname": case.classname})
        record = properties.get("record")
        report["suites"].append({
            "name": suite.name,
            "tests": suite.tests,
            "failures": suite.failures,
            "errors": suite.errors,
            "record": record,
            "attachment": attachment.group(1) if attachment else None,
            "cases": cases,
            "record_figures": figures(record) if record else None,
        })
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
