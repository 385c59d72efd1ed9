#!/usr/bin/env python3
"""Scores a blind round: the hazards its readers labelled before the linter ran, against the
findings of a build.

    rounds/score.py ROUND                       the round as measured (ROUND/findings.tsv, the
                                                findings of the frozen build)
    rounds/score.py ROUND --findings NEW.tsv    a later build on the same commits: a regression
                                                on an old round shows as a miss or a wrong finding
    rounds/score.py --extract REPO OUT.json...  turns `--message-format json` output into the
                                                findings format (repo, path, line, rule)

ROUND holds `repos.tsv` (repo, language, url, commit, files), `labels/REPO.tsv` (path, line,
rule, verdict, note: written by the reader before any finding was seen) and `judged.tsv`
(repo, path, line, rule, verdict, label, note: the findings that no label matched, judged
after the run; `label` is the line of the reader's label when the finding is the same hazard
reported on another line). Verdicts are `true`, `false` or `debatable`; debatable ones count on neither side. A
finding matches a label of the same file and rule within two lines of its own line, and, for a
device held by a name or attribute, the labels at the lines it names as where the device goes
(`findings.tsv`'s fifth column). Figures are per language, by each file's extension (a Rust
repository's Python package counts as Python). Only the rules' paths,
lines and verdicts are kept here, never the repositories' code.
"""
import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

NEAR = 2
OFF_BY_DEFAULT = {"silent_cpu_fallback", "unplaced_tensor"}
# Not a placement hazard: a file the linter could not read (a Python 2 script), reported as such.
NOT_SCORED = {"parse_error"}


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def extract(repo, outputs):
    writer = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    rows = set()
    for output in outputs:
        for line in open(output):
            message = json.loads(line)
            if message.get("reason") != "compiler-message":
                continue
            diagnostic = message["message"]
            code = (diagnostic.get("code") or {}).get("code", "")
            primary = next(s for s in diagnostic["spans"] if s["is_primary"])
            rule = code.removeprefix("placement::")
            if rule in NOT_SCORED:
                continue
            # The other lines the finding points at (where a held device goes).
            related = sorted(
                {
                    s["line_start"]
                    for s in diagnostic["spans"]
                    if not s["is_primary"] and s["file_name"] == primary["file_name"]
                }
            )
            also = ",".join(str(line) for line in related)
            rows.add((repo, primary["file_name"], primary["line_start"], rule, also))
    for row in sorted(rows):
        writer.writerow(row if row[4] else row[:4])


def match_related(findings, labels, labelled):
    """Labels no finding's own line matched, matched to a finding of the same file and rule that
    points at their line as where its device goes."""
    extra = defaultdict(list)
    for j, label in enumerate(labels):
        if j in labelled:
            continue
        for i, f in enumerate(findings):
            if f["path"] == label["path"] and f["rule"] == label["rule"] and any(
                abs(line - label["line"]) <= NEAR for line in f["also"]
            ):
                extra[i].append(j)
                labelled[j] = i
                break
    return extra


def match(findings, labels):
    """Pairs findings with labels of the same file and rule, nearest lines first."""
    pairs = sorted(
        (abs(f["line"] - l["line"]), i, j)
        for i, f in enumerate(findings)
        for j, l in enumerate(labels)
        if f["path"] == l["path"] and f["rule"] == l["rule"] and abs(f["line"] - l["line"]) <= NEAR
    )
    found, labelled = {}, {}
    for _, i, j in pairs:
        if i not in found and j not in labelled:
            found[i], labelled[j] = j, i
    return found, labelled


def score(round_dir, findings_path, default_only):
    repos = read_tsv(round_dir / "repos.tsv")
    judged = defaultdict(list)
    for row in read_tsv(round_dir / "judged.tsv"):
        row["line"] = int(row["line"])
        judged[row["repo"]].append(row)
    findings = defaultdict(list)
    with open(findings_path, newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            repo, path, line, rule = row[:4]
            also = [int(x) for x in row[4].split(",")] if len(row) > 4 and row[4] else []
            findings[repo].append({"path": path, "line": int(line), "rule": rule, "also": also})
    keep = (lambda rule: rule not in OFF_BY_DEFAULT) if default_only else (lambda rule: True)
    totals = defaultdict(lambda: defaultdict(int))
    unjudged, misses, wrong = [], [], []
    print("repo\tlanguage\tfindings\tright\twrong\tdebatable\thazards\treported")
    for entry in repos:
        repo = entry["repo"]
        labels = [l for l in read_tsv(round_dir / "labels" / f"{repo}.tsv") if keep(l["rule"])]
        for label in labels:
            label["line"] = int(label["line"])
        found = [f for f in findings[repo] if keep(f["rule"])]
        by_label, labelled = match(found, labels)
        through = match_related(found, labels, labelled)
        for i, js in through.items():
            if i not in by_label:
                # A finding's verdict is its best label's: true if any is.
                by_label[i] = min(js, key=lambda j: labels[j]["verdict"] != "true")
        verdicts = judged[repo]
        rest = [i for i in range(len(found)) if i not in by_label]
        by_judged, _ = match([found[i] for i in rest], verdicts)
        # A judged finding that is a label's hazard reported on another line is that label's.
        for k, v in list(by_judged.items()):
            same = verdicts[v].get("label")
            j = next(
                (j for j, l in enumerate(labels) if j not in labelled and same
                 and l["path"] == verdicts[v]["path"] and l["rule"] == verdicts[v]["rule"]
                 and l["line"] == int(same)),
                None,
            )
            if j is not None:
                by_label[rest[k]], labelled[j] = j, rest[k]
                del by_judged[k]
        # A mixed repository (a Rust workspace with a Python package) is scored per language,
        # by each file's extension.
        def language(path):
            return {".py": "Python", ".rs": "Rust"}.get(Path(path).suffix, entry["language"])

        counts = defaultdict(lambda: defaultdict(int))
        for i in range(len(found)):
            c = counts[language(found[i]["path"])]
            c["findings"] += 1
            if i in by_label:
                verdict = labels[by_label[i]]["verdict"]
            elif rest.index(i) in by_judged:
                verdict = verdicts[by_judged[rest.index(i)]]["verdict"]
            else:
                verdict = "unjudged"
                unjudged.append((repo, found[i]))
            c[{"true": "right", "false": "wrong"}.get(verdict, verdict)] += 1
            if verdict == "false":
                wrong.append((repo, found[i]))
            # A true finding the readers had not labelled is a hazard found, too.
            if i not in by_label and verdict == "true":
                c["hazards"] += 1
                c["reported"] += 1
        # Hazards: the readers' true labels, and true findings they had not labelled.
        for j, label in enumerate(labels):
            if label["verdict"] == "true":
                c = counts[language(label["path"])]
                c["hazards"] += 1
                c["reported"] += j in labelled
                if j not in labelled:
                    misses.append((repo, label))
        for lang in sorted(counts or {entry["language"]: defaultdict(int)}):
            c = counts[lang]
            print(
                f"{repo}\t{lang}\t{c['findings']}\t{c['right']}\t"
                f"{c['wrong']}\t{c['debatable']}\t{c['hazards']}\t{c['reported']}"
            )
            for key, value in c.items():
                totals[lang][key] += value
    for language, counts in sorted(totals.items()):
        judged_findings = counts["right"] + counts["wrong"]
        precision = counts["right"] / judged_findings if judged_findings else float("nan")
        recall = counts["reported"] / counts["hazards"] if counts["hazards"] else float("nan")
        print(
            f"{language}: precision {counts['right']}/{judged_findings} = {precision:.2f}, "
            f"recall {counts['reported']}/{counts['hazards']} = {recall:.2f} "
            f"({counts['debatable']} debatable findings, {counts['unjudged']} unjudged)"
        )
    for title, rows in (("wrong", wrong), ("unjudged", unjudged)):
        for repo, f in rows:
            print(f"{title}\t{repo}\t{f['path']}:{f['line']}\t{f['rule']}")
    for repo, label in misses:
        print(f"miss\t{repo}\t{label['path']}:{label['line']}\t{label['rule']}\t{label['note']}")
    return 1 if unjudged else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", nargs="?", type=Path)
    parser.add_argument("--findings", type=Path)
    parser.add_argument("--default-levels", action="store_true",
                        help="leave out the rules that are off by default")
    parser.add_argument("--extract", nargs="+", metavar=("REPO", "OUT.json"))
    args = parser.parse_args()
    if args.extract:
        return extract(args.extract[0], args.extract[1:])
    if args.round is None:
        parser.error("a round folder, or --extract")
    findings = args.findings or args.round / "findings.tsv"
    return score(args.round, findings, args.default_levels)


if __name__ == "__main__":
    sys.exit(main())
