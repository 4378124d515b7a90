#!/bin/sh
# Runs the shell commands of a Markdown document, so that the document
# cannot rot:
#
#   tests/run-doc.sh DOC.md
#
# Every ```sh block is a test point, run in order in one shell (so cd and
# export carry over from block to block) with `set -e`: a failing command
# fails its block and stops the run.  A block whose info string is
# ```sh root needs root (it installs packages) and is reported as a SKIP.
# A ```LANG file=NAME block is written to NAME in the current directory at
# that point, as the reader saves it; a ```LANG append=NAME block is added
# to the end of NAME.  The caller chooses the environment
# (HOME, PATH, ...) and the working directory.
doc=$1
[ -f "$doc" ] || { echo "usage: run-doc.sh DOC.md" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Translate the document into a script.  Each block reports its own TAP
# line; the plan counts the blocks.
awk -v state="$tmp/state" '
  function q(s) { gsub(/\047/, "\047\\\047\047", s); return "\047" s "\047" }
  BEGIN { n = 0; mode = "" }
  mode == "" && /^```/ {
    info = substr($0, 4); line = NR
    if (info ~ /^[a-z]+ +(file|append)=/) {
      name = info; sub(/^[a-z]+ +(file|append)=/, "", name)
      mode = "file"
      print "cat " (info ~ /append=/ ? ">>" : ">") " " q(name) " <<\047BP_DOC_EOF\047"
    } else if (info == "sh root") {
      n++; mode = "skip"
      print "echo " q("BP_DOC_TAP ok " n " - block at line " line " # SKIP needs root")
    } else if (info == "sh") {
      n++; mode = "sh"
      print "echo " n " " line " > " q(state)
    } else {
      mode = "other"
    }
    next
  }
  mode != "" && /^```[ \t]*$/ {
    if (mode == "file") print "BP_DOC_EOF"
    if (mode == "sh") print "echo " q("BP_DOC_TAP ok " n " - block at line " line)
    mode = ""; next
  }
  mode == "file" || mode == "sh" { print }
  END { print "echo done > " q(state); printf "%d\n", n > "/dev/stderr" }
' "$doc" > "$tmp/script" 2> "$tmp/count" || exit 1
echo "1..$(cat "$tmp/count")"
(
  cd "$PWD" || exit 1
  set -e
  # The document's commands run with its output kept as TAP diagnostics.
  . "$tmp/script"
) > "$tmp/log" 2>&1
st=$?
# Pass TAP lines through; everything else becomes a diagnostic.
# Only the script's own lines are TAP; the commands' output (which may
# itself be TAP, from bp-certify) becomes diagnostics when a block fails.
sed -n 's/^BP_DOC_TAP //p' "$tmp/log"
if [ $st -ne 0 ]; then
  grep -v '^BP_DOC_TAP ' "$tmp/log" | tail -n 60 | sed 's/^/# /'
  read -r block line < "$tmp/state" || block=0
  echo "not ok $block - block at line $line (exit status $st)"
fi
exit $st
