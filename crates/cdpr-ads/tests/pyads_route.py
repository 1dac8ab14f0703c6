"""pyads' ADS UDP service functions against the virtual PLC's responder: run by tests/pyads.rs.

Usage: python pyads_route.py PLC_IP SENDING_NET_ID
pyads sends to UDP port 48899 with no way to say another, so the test serves it on a loopback
address of its own. Prints one JSON object: the NetId pyads was told, whether the route with
the factory credentials was added, and what pyads made of a wrong password.
"""

import json
import sys

import pyads
from pyads import pyads_ex

ip, sending_net_id = sys.argv[1], sys.argv[2]
out = {"pyads": pyads.__version__}

# Identify: the NetId from the reply's header.
out["net_id"] = pyads_ex.adsGetNetIdForPLC(ip)

out["added"] = pyads.add_route_to_plc(
    sending_net_id, "10.20.30.40", ip, "Administrator", "1", route_name="pyads-route"
)

# TwinCAT answers a wrong password with status 0x704; pyads 3.6 reads the reply one byte off
# (pyads issue #460) and raises instead of returning False. Either is a refusal.
try:
    out["wrong_password"] = pyads.add_route_to_plc(
        "9.9.9.9.1.1", "9.9.9.9", ip, "Administrator", "wrong", route_name="refused"
    )
except RuntimeError as e:
    out["wrong_password"] = "raised: " + str(e)[:80]

print(json.dumps(out))
