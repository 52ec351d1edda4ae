# The two stream readers agree: on the shared corpus of crafted streams
# (tests/corpus/streams, written by make-corpus.py, outcomes in expected.tsv) `inspect`
# and numpipe.read (with every zstd backend this machine has) accept the same streams,
# with the same record count, and refuse the same streams with the same message;
# a refusal is numpipe.FormatError, never another exception (NumPy's ValueError).
require_python
CORPUS=$SRC/tests/corpus/streams
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
[ "$(grep -vc '^#' "$CORPUS/expected.tsv")" -ge 25 ] || fail "the corpus lists too few streams"

# 1. inspect: exit 0 and the record count, or exit 2 with "inspect: FILE: MESSAGE".
while IFS=$'\t' read -r file expected; do
  case $file in '#'*) continue ;; esac
  cp "$CORPUS/$file" "$file"
  case $expected in
    "ok "*)
      inspect --json "$file" > out.json 2> err.txt || fail "inspect refused $file: $(cat err.txt)"
      n=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' out.json)
      [ "$n" = "${expected#ok }" ] || fail "inspect read $n records of $file, expected ${expected#ok }" ;;
    "refuse "*)
      expect_exit 2 "inspect: $file: ${expected#refuse }" -- inspect "$file"
      [ "$(cat "$WORK/.stderr")" = "inspect: $file: ${expected#refuse }" ] ||
        fail "inspect's message on $file: $(cat "$WORK/.stderr")" ;;
    *) fail "expected.tsv: bad outcome '$expected' for $file" ;;
  esac
done < "$CORPUS/expected.tsv"

# 2. numpipe.read and numpipe.records, with each zstd backend.
backends=libzstd
"$PY" -c 'import zstandard' 2> /dev/null && backends="zstandard $backends"
command -v zstd > /dev/null && backends="$backends cli"
for backend in $backends; do
  NUMPIPE_PY_ZSTD=$backend "$PY" - "$CORPUS/expected.tsv" <<'PYEOF' || fail "numpipe.read disagrees with inspect (NUMPIPE_PY_ZSTD=$backend)"
import os, sys, numpipe
bad = 0
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    path, expected = line.rstrip("\n").split("\t")
    for read in (lambda p: len(numpipe.read(p).records), lambda p: sum(1 for _ in numpipe.records(p))):
        try:
            n = read(path)
            outcome = "ok %d" % n
        except numpipe.FormatError as e:
            outcome = "refuse " + str(e)[len(path) + 2:] if str(e).startswith(path + ": ") else "misnamed " + str(e)
        except Exception as e:  # anything else is a bug in the reader
            outcome = "%s %s" % (type(e).__name__, e)
        if outcome != expected:
            print("%s (%s): %s, expected %s" % (path, os.environ["NUMPIPE_PY_ZSTD"], outcome, expected))
            bad += 1
sys.exit(1 if bad else 0)
PYEOF
done
no_leftovers .
