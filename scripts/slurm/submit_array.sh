#!/bin/bash
# submit_array.sh N - submits array.sbatch as an array of N tasks (one shard of the replications
# each) and merge.sbatch to run once every task has succeeded; prints the two job ids
# ("ARRAY_ID MERGE_ID"). The environment (SCENARIO, PARTS, OUT, SPOTLAB, SPOTLAB_ARGS) goes to
# both jobs. docs/slurm.md.
#
#   SCENARIO=scenarios/default.cfg OUT=results/default.h5 SPOTLAB_ARGS="--reps 32" scripts/slurm/submit_array.sh 8
set -eu
n=${1:?usage: submit_array.sh N (tasks in the array)}
here=$(cd "$(dirname "$0")" && pwd)
: "${SCENARIO:?set SCENARIO}" "${OUT:?set OUT}"
export PARTS=${PARTS:-results/parts} SPOTLAB_SHARDS=$n
mkdir -p "$PARTS"
rm -f "$PARTS"/part_*.h5 # parts of an earlier run must not be merged with this one's
array=$(sbatch --parsable --array=0-$((n - 1)) "$here/array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes "$here/merge.sbatch")
echo "${array} ${merge%%;*}"
