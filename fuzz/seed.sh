#!/usr/bin/env bash
# Seeds the fuzzers' corpora with the rules' fixtures and the notebooks of the tests and the demo.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/lint_text corpus/lint_python corpus/notebook
for file in ../linter/src/rules/fixtures/*/*.rs; do
    rule=$(basename "$(dirname "$file")")
    cp "$file" "corpus/lint_text/$rule-$(basename "$file")"
done
for file in ../linter/src/rules/fixtures/*/*.py; do
    rule=$(basename "$(dirname "$file")")
    cp "$file" "corpus/lint_python/$rule-$(basename "$file")"
done
for file in ../linter/tests/fixtures/notebooks/*.ipynb ../tests/demo/python/*.ipynb; do
    cp "$file" "corpus/notebook/$(basename "$file")"
done
