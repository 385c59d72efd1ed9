#!/bin/bash
# run.sh BIN OUT.tsv [BUGS.tsv]: runs BIN with `-W unplaced_tensor` on the parent of every fix in
# BUGS.tsv (default: this folder's; the held-out set is rounds/mined-2/bugs.tsv), each checked out
# whole (its Python files) from a mirror of its repository, and writes the findings
# (`score.py --extract "REPO@PARENT"` lines) to OUT.tsv. Mirrors are bare git repositories under
# $MIRRORS (default /work/.mirror), as OWNER+NAME/repo; checkouts go under $TREES (default
# /tmp/placement-mined).
set -euo pipefail
bin=$(realpath "$1") out=$2
here=$(dirname "$(realpath "$0")")
bugs=${3:-$here/bugs.tsv}
mirrors=${MIRRORS:-/work/.mirror} trees=${TREES:-/tmp/placement-mined}
: > "$out"
tail -n +2 "$bugs" | cut -f1,3 | sort -u | while IFS=$'\t' read -r repo parent; do
  git=$mirrors/${repo/\//+}/repo
  tree=$trees/${repo/\//+}-${parent:0:10}
  if [ ! -d "$tree" ]; then
    mkdir -p "$tree"
    # File by file: a mirror may lack a large file's blob.
    git --git-dir="$git" ls-tree -r "$parent" | awk '$2 == "blob"' |
      while read -r _ _ sha path; do
        case "$path" in *.py|pyproject.toml|setup.cfg|setup.py) ;; *) continue ;; esac
        mkdir -p "$tree/$(dirname "$path")"
        git --git-dir="$git" cat-file blob "$sha" > "$tree/$path" 2>/dev/null || rm -f "$tree/$path"
      done
  fi
  (cd "$tree" && "$bin" . -W unplaced_tensor --message-format json > "$trees/out.json" 2>/dev/null || true)
  python3 "$here/../score.py" --extract "$repo@$parent" "$trees/out.json" | sed 's#\t\./#\t#' >> "$out"
done
