#!/usr/bin/env bash
# Checks that every relative link in README.md and docs/*.md names a file that exists (and, with
# a #fragment into a Markdown file, a heading of it). Prints FILE:LINE: and the link for each one
# that does not resolve; exits 1 if any. Usage: scripts/check-links.sh [ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0
# GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces -> -.
anchors() {
  grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//; s/ +#*$//' | tr 'A-Z' 'a-z' |
    sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
for file in README.md docs/*.md; do
  dir=$(dirname "$file")
  # [text](target) outside code spans; one match a line per link, with its line number.
  while IFS=: read -r line link; do
    target=${link%%#*}
    fragment=
    [[ $link == *'#'* ]] && fragment=${link#*#}
    case $target in http://* | https://* | mailto:*) continue ;; esac
    path=$dir/$target
    [[ -z $target ]] && path=$file
    if [[ ! -e $path ]]; then
      echo "$file:$line: broken link '$link' ($path does not exist)"
      status=1
    elif [[ -n $fragment && $path == *.md ]] && ! anchors "$path" | grep -qxF "$fragment"; then
      echo "$file:$line: broken link '$link' (no heading '#$fragment' in $path)"
      status=1
    fi
  done < <(sed -E 's/`[^`]*`//g' "$file" | grep -noE '\]\([^) ]+\)' | sed -E 's/\]\(//; s/\)$//')
done
exit $status
