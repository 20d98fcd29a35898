"""B9 peer: ansible-core's templar evaluating the benchmark's expressions (conditions like a task's
`when`, and templates like a task's arguments). Prints the seconds spent in the loop (JSON).

Usage: python expr_bench.py < batch.json   (batch: {"vars": {...}, "conds": [...], "templates": [...], "rounds": N})
"""
import json
import os
import sys
import time

os.environ.setdefault('ANSIBLE_DEPRECATION_WARNINGS', 'False')
os.environ.setdefault('ANSIBLE_NOCOLOR', '1')

from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.plugins.loader import init_plugin_loader  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402

init_plugin_loader()
batch = json.load(sys.stdin)
templar = Templar(loader=DataLoader(), variables=batch['vars'])
conds = [trust_as_template(c) for c in batch['conds']]
templates = [trust_as_template(t) for t in batch['templates']]
t0 = time.perf_counter()
count = 0
for _ in range(batch['rounds']):
    for c in conds:
        templar.evaluate_conditional(c)
        count += 1
    for t in templates:
        templar.template(t)
        count += 1
print(json.dumps({'seconds': time.perf_counter() - t0, 'count': count}))
