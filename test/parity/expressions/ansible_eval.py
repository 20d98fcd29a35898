"""Evaluate a batch of expressions with ansible-core's own templar (the differential suite's reference).

Input (stdin): a JSON list of cases ``{"id", "kind", "text", "vars"}``; ``kind`` is ``template``
(the string is rendered like a task argument: ``Templar.template``, native types kept for a single
expression) or ``cond`` (evaluated exactly like a task's ``when``: ``TemplateEngine.evaluate_conditional``,
a boolean result required). Output (stdout): one JSON line per case, in input order:
``{"id", "ok": true, "value", "type"}`` or ``{"id", "ok": false, "error": "<class>: <first line> [<cause class>]"}``.

``type`` is the Python type name of the result (int, float, str, bool, NoneType, list, dict; tuples are
reported as list; anything else by its class name, e.g. datetime). ``value`` is JSON: floats that are not
finite are ``{"$float": "inf"|"-inf"|"nan"}``, ints beyond 2**53 ``{"$int": "digits"}``, datetimes their ISO form, other objects their repr.

Variables are given the trust that a playbook's ``vars:`` have (every string is trusted as a template,
as the YAML loader tags them), so a variable holding ``{{ ... }}`` is rendered when used, as in a play.

Usage: ``python ansible_eval.py [BASEDIR] < batch.json`` with the Ansible venv's python.
"""

from __future__ import annotations

import os

# Before ansible reads its configuration: quiet, deterministic, no colour.
os.environ.setdefault('ANSIBLE_DEPRECATION_WARNINGS', 'False')
os.environ.setdefault('ANSIBLE_NOCOLOR', '1')
os.environ.setdefault('ANSIBLE_FORCE_COLOR', '0')
os.environ.setdefault('TZ', 'UTC')

import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence, Set  # noqa: E402

time.tzset()

from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.plugins.loader import init_plugin_loader  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402


def trusted(value):
    """The value with every string trusted as a template (what loading a playbook's vars does)."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [trusted(v) for v in value]
    return value


def type_name(value) -> str:
    """The plain Python type name (tagged/lazy subclasses reported as their builtin base)."""
    if value is None:
        return 'NoneType'
    for cls, name in ((bool, 'bool'), (int, 'int'), (float, 'float'), (str, 'str')):
        if isinstance(value, cls):
            return name
    if isinstance(value, Mapping):
        return 'dict'
    if isinstance(value, (list, tuple)):
        return 'list'
    if isinstance(value, Set):
        return 'set'
    if isinstance(value, (bytes, bytearray)):
        return 'bytes'
    if isinstance(value, datetime.datetime):
        return 'datetime'
    if isinstance(value, datetime.date):
        return 'date'
    return type(value).__name__


def plain(value):
    """A JSON-serialisable form of a result (see the module docstring)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        # JSON readers (JavaScript's) keep ints exact only within 2**53: bigger ones as their digits
        return int(value) if abs(value) <= 2**53 - 1 else {'$int': str(int(value))}
    if isinstance(value, float):
        if math.isnan(value):
            return {'$float': 'nan'}
        if math.isinf(value):
            return {'$float': 'inf' if value > 0 else '-inf'}
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Set):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    return repr(value)


def describe(ex: BaseException) -> str:
    """``Class: first line of the message [cause class]``."""
    lines = str(ex).strip().splitlines()
    first = lines[0] if lines else ''
    cause = ex.__cause__
    suffix = f' [{type(cause).__name__}]' if cause is not None else ''
    return f'{type(ex).__name__}: {first}{suffix}'


def evaluate(loader: DataLoader, case: dict) -> dict:
    cid = case['id']
    text = case['text']
    kind = case.get('kind', 'template')
    templar = Templar(loader=loader, variables=trusted(case.get('vars') or {}))
    try:
        if kind == 'cond':
            result = templar.evaluate_conditional(trust_as_template(text))
        elif kind == 'template':
            result = templar.template(trust_as_template(text))
        else:
            return {'id': cid, 'ok': False, 'error': f'HarnessError: unknown kind {kind!r}'}
        return {'id': cid, 'ok': True, 'value': plain(result), 'type': type_name(result)}
    except Exception as ex:  # every failure is an outcome to compare
        return {'id': cid, 'ok': False, 'error': describe(ex)}


def main() -> None:
    try:
        import jmespath  # noqa: F401  (json_query needs it; ansible does not depend on it)
    except ImportError:
        sys.stderr.write('ansible_eval.py: the Python package jmespath is missing from the Ansible venv (json_query needs it): '
                         f'{sys.executable} -m pip install jmespath\n')
        sys.exit(3)
    out = sys.stdout
    # Anything Ansible prints (warnings, display) must not mix with the JSON lines.
    sys.stdout = sys.stderr
    # what the ansible CLIs do first: collections (community.general's json_query, ...) become loadable
    init_plugin_loader()
    loader = DataLoader()
    if len(sys.argv) > 1:
        loader.set_basedir(sys.argv[1])
    cases = json.load(sys.stdin)
    for case in cases:
        out.write(json.dumps(evaluate(loader, case), ensure_ascii=False, allow_nan=False) + '\n')
    out.flush()


if __name__ == '__main__':
    main()
