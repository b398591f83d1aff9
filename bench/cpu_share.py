#!/usr/bin/env python3
"""CPU time by process group over a period, from /proc/PID/stat (utime + stime).

    cpu_share.py SECONDS GROUP=RULE ...
    cpu_share.py --now RULE ...      the CPU milliseconds the matching processes have used so far

A RULE is pid:N (that process), title:TEXT (processes whose command line,
as PostgreSQL's backends set it, contains TEXT) or comm:NAME; a process
counts in the first group whose rule it matches. Every
process is sampled every 0.2 s; a process's CPU is its last sample less its
first (0 for one started during the period, which it then counts whole).
Prints one line per group: its name and CPU seconds per second of the period.
"""
import os
import sys
import time

TICK = os.sysconf('SC_CLK_TCK')


def sample():
    out = {}
    for name in os.listdir('/proc'):
        # Not this process: its command line holds the rules' text.
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f'/proc/{name}/stat') as f:
                stat = f.read()
            with open(f'/proc/{name}/cmdline', 'rb') as f:
                title = f.read().replace(b'\0', b' ').decode(errors='replace').strip()
        except OSError:
            continue
        comm = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat[stat.rindex(')') + 2:].split()
        out[int(name)] = (comm, title, int(fields[11]) + int(fields[12]))
    return out


def matches(rule, pid, comm, title):
    kind, _, value = rule.partition(':')
    return (kind == 'pid' and pid == int(value)) or (kind == 'title' and value in title) \
        or (kind == 'comm' and comm == value)


def main():
    if sys.argv[1] == '--now':
        total = sum(ticks for pid, (comm, title, ticks) in sample().items()
                    if any(matches(rule, pid, comm, title) for rule in sys.argv[2:]))
        print(total * 1000 // TICK)
        return
    seconds = float(sys.argv[1])
    groups = [arg.split('=', 1) for arg in sys.argv[2:]]

    def group_of(pid, comm, title):
        for name, rule in groups:
            if matches(rule, pid, comm, title):
                return name
        return None

    first = sample()
    last = dict(first)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        time.sleep(0.2)
        for pid, s in sample().items():
            if pid in first and first[pid][0] != s[0]:
                continue  # a pid used again by another program: left out
            if pid not in first:
                first[pid] = (s[0], s[1], 0)
            last[pid] = s
    elapsed = time.monotonic() - start
    totals = {name: 0 for name, _ in groups}
    for pid, (comm, title, ticks) in last.items():
        g = group_of(pid, comm, title)  # the title as last seen (a backend's shows its state)
        if g is not None:
            totals[g] += ticks - first[pid][2]
    for name, _ in groups:
        print(f'{name} {totals[name] / TICK / elapsed:.4f}')


main()
