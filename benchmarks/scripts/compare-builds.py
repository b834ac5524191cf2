#!/usr/bin/env python3
"""Summarises compare-builds.sh's raw output: the median objects/s of each row per build, and after/before."""
import re
import statistics
import sys
from pathlib import Path

out, rounds = Path(sys.argv[1]), int(sys.argv[2])
rows = {}  # (row) -> {label: [objects/s per round]}
order = []


def add(row, label, value):
    if row not in rows:
        rows[row] = {'before': [], 'after': []}
        order.append(row)
    rows[row][label].append(value)


for label in ('before', 'after'):
    for r in range(1, rounds + 1):
        cluster = out / f'cluster-{label}-{r}.txt'
        if cluster.exists():
            for line in cluster.read_text().splitlines():
                # "put 1 KiB      26   0.03 ..." : a scenario name, then objects/s as the first number column
                m = re.match(r'^((?:put|get|store write|StoreClient\.read)(?: x\d+)? \d+ KiB(?: batched x\d+)?(?: \([^)]*\))?)\s+(\d+)\s', line)
                if m and ' = ' not in line:
                    add('cluster: ' + re.sub(r'\s+', ' ', m.group(1)).strip(), label, float(m.group(2)))
        store = out / f'store-{label}-{r}.txt'
        if store.exists():
            name = None
            for line in store.read_text().splitlines():
                if line.startswith('## '):
                    name = line[3:]
                m = re.search(r'objects/s=(\d+)', line)
                if m and name:
                    add('store load: ' + name, label, float(m.group(1)))

print(f'| row | before objects/s (median of {rounds}) | after | after / before |')
print('|---|---:|---:|---:|')
for row in order:
    b, a = rows[row]['before'], rows[row]['after']
    if not b or not a:
        print(f'| {row} | {len(b)} runs | {len(a)} runs | missing |')
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    ratio = ma / mb if mb else float('nan')
    print(f'| {row} | {mb:,.0f} | {ma:,.0f} | {ratio:.2f} |')
