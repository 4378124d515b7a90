#!/bin/sh
# The CUDA plugin's error messages, read from its sources (no GPU, no
# build needed).  Every message starts with "cuda: " (or "cuda_host: "
# for the pinned-memory device type) once, then names the op or device
# function: cu_check() and cu_launched() add "cuda: " themselves, so the
# `what` they, convert() and cu_cast_to() are given must not start with
# it (a message read "cuda: cuda: cast: ..."), and a message formatted
# directly (CU_ERR, set_error, set_errorf) must start with it.
dir="${top_srcdir:-.}/plugins/cuda"
if ! command -v perl >/dev/null 2>&1; then
  echo "1..0 # SKIP perl not found"
  exit 0
fi
if [ ! -f "$dir/plugin.cu" ]; then
  echo "1..0 # SKIP $dir/plugin.cu not found"
  exit 0
fi
echo "1..2"
fail=0

# Prints FILE:LINE: STATEMENT for each statement (text up to a ';' or a
# '{') that matches the check.
scan() {
  perl -e '
    my $check = shift @ARGV;
    for my $f (@ARGV) {
      open(my $fh, "<", $f) or die "$f: $!";
      local $/;
      my $src = <$fh>;
      close $fh;
      $src =~ s{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]//g; $c }gse;  # comments, lines kept
      $src =~ s{//[^\n]*}{}g;
      my $line = 1;
      for my $stmt (split /(?<=[;{])/, $src) {
        my ($lead) = $stmt =~ /^(\s*)/;
        my $start = $line + ($lead =~ tr/\n//);
        $line += ($stmt =~ tr/\n//);
        (my $flat = $stmt) =~ s/\s+/ /g;
        # Adjacent string literals joined, as the compiler joins them.
        $flat =~ s/" "//g;
        my $bad = 0;
        if ($check eq "helpers") {
          $bad = 1
            if $flat =~ /\b(?:cu_check|cu_launched|convert|cu_cast_to)\s*\(.*"cuda(?:_host)?: /;
        } else {
          if ($flat =~ /\b(?:CU_ERR|set_errorf?)\s*\(([^"]*?)"((?:[^"\\]|\\.)*)"/) {
            my $fmt = $2;
            $bad = 1 unless $fmt =~ /^cuda(?:_host)?: / && $fmt !~ /^cuda: cuda(?:_host)?: /;
          }
        }
        print "$f:$start: $flat\n" if $bad;
      }
    }' "$@"
}

files=$(ls "$dir"/*.cu "$dir"/*.cuh "$dir"/*.h)

out=$(scan helpers $files)
if [ -z "$out" ]; then
  echo "ok 1 - no cu_check, cu_launched, convert or cu_cast_to is given a \"cuda: \" prefix"
else
  echo "not ok 1 - no cu_check, cu_launched, convert or cu_cast_to is given a \"cuda: \" prefix"
  echo "$out" | sed 's/^/# /'
  fail=1
fi

out=$(scan direct $files)
if [ -z "$out" ]; then
  echo "ok 2 - every message formatted directly starts with \"cuda: \" once"
else
  echo "not ok 2 - every message formatted directly starts with \"cuda: \" once"
  echo "$out" | sed 's/^/# /'
  fail=1
fi
exit $fail
