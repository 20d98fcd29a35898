"""ansible-core's reading of host patterns, for test/parity/host-patterns.test.ts.

stdin: {"inventory": PATH, "patterns": [PATTERN, ...]} (a pattern is a string or a list of strings).
stdout: one JSON list: for each pattern {"split": [...], "hosts": [...] | null, "error": str | null,
"warnings": [term, ...]} — `split` from split_host_pattern, `hosts` from InventoryManager.get_hosts
(a fresh pattern cache each time), `warnings` the terms of "Could not match supplied host pattern".
"""
import json
import sys

from ansible.inventory import manager as inventory_manager
from ansible.inventory.manager import InventoryManager, split_host_pattern
from ansible.parsing.dataloader import DataLoader

request = json.load(sys.stdin)
inventory = InventoryManager(loader=DataLoader(), sources=[request["inventory"]])
PREFIX = "Could not match supplied host pattern, ignoring: "
warned = []


def warning(msg, *args, **kwargs):
    if str(msg).startswith(PREFIX):
        warned.append(str(msg)[len(PREFIX):])


inventory_manager.display.warning = warning
out = []
for pattern in request["patterns"]:
    warned.clear()
    inventory.clear_pattern_cache()
    inventory._hosts_patterns_cache = {}
    entry = {"split": split_host_pattern(pattern), "hosts": None, "error": None}
    try:
        entry["hosts"] = [h.name for h in inventory.get_hosts(pattern)]
    except Exception as e:  # the error is compared as "an error", not by its text
        entry["error"] = "%s: %s" % (type(e).__name__, e)
    entry["warnings"] = list(warned)
    out.append(entry)
json.dump(out, sys.stdout)
