#!/bin/sh
# Prints libbackplane's exported symbols, one "NAME VERSION-NODE" a line,
# sorted: the form of abi/symbols-1.0.txt.
#   abi/symbols.sh path/to/libbackplane.so
nm -D --defined-only "$1" |
  awk '$2 ~ /^[TDBRVWGSi]$/ { n = split($3, a, "@"); print a[1], (n > 1 ? a[n] : "(unversioned)") }' |
  LC_ALL=C sort
