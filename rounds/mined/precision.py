#!/usr/bin/env python3
"""Precision of a build on judged findings: of the findings a helper judged (`judged.tsv`: key
`REPO@PARENT`, path, line, verdict `true`/`false`/`debatable`, reason), those a build still makes
(`FINDINGS.tsv`, as `run.sh` writes it), by verdict.

    rounds/mined/precision.py FINDINGS.tsv rounds/mined-2/judged.tsv

A judged finding is still made when the build has an `unplaced_tensor` finding in the same file
of the same parent within two lines of it. Judged findings a build no longer makes count on
neither side; its findings nobody judged are listed as `unjudged`. Only places are kept, never
code.
"""
import csv
import sys
from collections import Counter

NEAR = 2


def main():
    made = [row[:3] for row in csv.reader(open(sys.argv[1], newline=""), delimiter="\t")
            if len(row) > 3 and row[3] == "unplaced_tensor"]
    judged = list(csv.DictReader(open(sys.argv[2], newline=""), delimiter="\t"))
    near = lambda a, b: a[0] == b[0] and a[1] == b[1] and abs(int(a[2]) - int(b[2])) <= NEAR
    counts = Counter()
    for row in judged:
        key = (row["key"], row["path"], row["line"])
        if any(near(key, finding) for finding in made):
            counts[row["verdict"]] += 1
    true, false = counts["true"], counts["false"]
    share = f"{true / (true + false):.2f}" if true + false else "-"
    print(f"precision {true}/{true + false} = {share} ({counts['debatable']} debatable, "
          f"{len(judged) - sum(counts.values())} judged findings no longer made)")
    keys = {row["key"] for row in judged}
    for finding in made:
        if finding[0] in keys and not any(
            near((r["key"], r["path"], r["line"]), finding) for r in judged
        ):
            print("unjudged\t" + "\t".join(finding))
    return 0


if __name__ == "__main__":
    sys.exit(main())
