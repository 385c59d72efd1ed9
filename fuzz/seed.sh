#!/usr/bin/env bash
# Seeds the fuzzer's corpus with the rules' fixtures.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/lint_text corpus/lint_python
for file in ../linter/src/rules/fixtures/*/*.rs; do
    rule=$(basename "$(dirname "$file")")
    cp "$file" "corpus/lint_text/$rule-$(basename "$file")"
done
for file in ../linter/src/rules/fixtures/*/*.py; do
    rule=$(basename "$(dirname "$file")")
    cp "$file" "corpus/lint_python/$rule-$(basename "$file")"
done
