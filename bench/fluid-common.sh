# Shared by bench/fluid and bench/fluid-cpu (sourced, not run): the seed's
# parameters and a reader of fluid-step's diagnostics record.

# react scene, --scheme seed with the seed's parameters (spec/fluid.md)
FLUID_SEED_PARAMS="--diff 0.0001 --visc 0.0001 --dt 0.1 --force 5 --source 100 --scheme seed"

# fluid_diag FILE KEY [FORMAT]: attr KEY of FILE's diagnostics record ('' if absent),
# floats in Python's FORMAT (default .4g). Needs $BIN/inspect.
fluid_diag() {
  "$BIN/inspect" --json "$1" | python3 -c "import json, sys
r = [x for x in json.load(sys.stdin) if x['name'] == 'diagnostics'][0]['attrs'].get(sys.argv[1], '')
print(format(r, sys.argv[2]) if isinstance(r, float) else r)" "$2" "${3:-.4g}"
}
