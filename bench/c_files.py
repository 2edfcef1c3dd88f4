#!/usr/bin/env python3
"""The C rows' file list for bench_masks (make bench, make bench-only).

The C corpus of `make check-corpus` (binutils 2.40 from Debian's
binutils-source, preprocessed by gcc, the files gcc accepts:
corpus/check_corpus.py, c_files) exists only after preprocessing, so the
list is written at bench time: the corpus is prepared under WORKDIR (kept
between runs, the tarball's size and time are its stamp) and COUNT files
spread evenly over the sorted sizes of those between MIN and MAX bytes are
listed in OUT, one path a line.

usage: c_files.py SRCDIR WORKDIR OUT [COUNT [MIN MAX]]
"""
import os
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    srcdir, workdir, out = sys.argv[1:4]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    lo = int(sys.argv[5]) if len(sys.argv) > 5 else 15000
    hi = int(sys.argv[6]) if len(sys.argv) > 6 else 90000
    sys.path.insert(0, os.path.join(srcdir, "corpus"))
    import check_corpus

    class Ctx:
        shared = srcdir = None
        cache = {}
    Ctx.workdir = workdir
    files, _ = check_corpus.c_files(Ctx())
    sized = sorted((os.path.getsize(f), f) for f in files if lo <= os.path.getsize(f) <= hi)
    if len(sized) < count:
        sys.exit("c_files.py: only %d corpus files of %d-%d bytes" % (len(sized), lo, hi))
    pick = [sized[(2 * i + 1) * len(sized) // (2 * count)][1] for i in range(count)]
    with open(out, "w") as f:
        f.write("# bench_masks corpus of the bundled c grammar, written by bench/c_files.py: "
                "%d preprocessed binutils files of %d-%d bytes (the C corpus of make check-corpus)\n"
                % (count, lo, hi))
        for p in pick:
            f.write(p + "\n")


if __name__ == "__main__":
    main()
