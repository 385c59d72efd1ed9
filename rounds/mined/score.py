#!/usr/bin/env python3
"""Scores the linter on real device bugs that public projects fixed: the bugs' places in the
parents of their fixes (`bugs.tsv`: repository, fix and parent commits, path, line, kind, where
the line is, a note), against the findings of a build run on each parent's whole tree.

    rounds/mined/score.py FINDINGS.tsv [BUGS.tsv]

BUGS.tsv defaults to this folder's `bugs.tsv` (the set the rule was tuned on); the held-out set
is `rounds/mined-2/bugs.tsv`.

FINDINGS.tsv holds `score.py --extract "REPO@PARENT" OUT.json` lines (`run.sh` makes it, from
each repository's mirror). A bug is found when a finding of its rule (`unplaced_tensor` for a
tensor left on the CPU, `implicit_device` for `type_as`, `cuda_at_import`) is in its file within
two lines of it, or names its line as a related place. Only places are kept here, never code.
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

RULE = {"stranded_cpu": "unplaced_tensor", "type_as": "implicit_device", "cuda_at_import": "cuda_at_import"}
NEAR = 2


def main():
    listed = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent / "bugs.tsv"
    bugs = list(csv.DictReader(open(listed, newline=""), delimiter="\t"))
    findings = defaultdict(list)
    for row in csv.reader(open(sys.argv[1], newline=""), delimiter="\t"):
        key, path, line, rule = row[:4]
        related = [int(x) for x in row[4].split(",")] if len(row) > 4 and row[4] else []
        findings[(key, path, rule)].append([int(line)] + related)
    found = defaultdict(lambda: [0, 0])
    misses = []
    for bug in bugs:
        key = (f"{bug['repo']}@{bug['parent_commit']}", bug["path"], RULE[bug["kind"]])
        line = int(bug["line"])
        hit = any(abs(l - line) <= NEAR for lines in findings[key] for l in lines)
        for group in (bug["kind"], f"{bug['kind']}, {bug['in_module_method']}"):
            found[group][0] += hit
            found[group][1] += 1
        if not hit:
            misses.append(bug)
    for group, (hits, total) in sorted(found.items()):
        print(f"{group}: {hits}/{total} = {hits / total:.2f}")
    for bug in misses:
        print(f"miss\t{bug['repo']}\t{bug['path']}:{bug['line']}\t{bug['kind']}\t{bug['in_module_method']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
