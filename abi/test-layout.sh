#!/bin/sh
# Compares the struct layouts and fixed codes of the SDK headers with the
# checked-in ABI baseline; a moved, resized, removed or added field fails.
exec "${top_builddir:-.}/abi/layout" "${top_srcdir:-.}/abi/layout-1.0.txt"
