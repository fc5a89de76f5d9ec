#!/bin/sh
# The files dmlbench writes beside a results database — the database, its
# write-ahead log and shared memory, the logs kept beside it, and the lock
# files of earlier versions —
# are ignored by git, wherever they are in the tree; so are the committed
# databases as configure expands them (reports/data/NAME.db and its stamp),
# and their archives are not. Skipped (77) outside a git checkout.
# Usage: gitignore_test.sh SOURCE_DIR
src=$1
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
status=0
for file in results.db results.db-wal results.db-shm results.db.logs/ results.db.logs/1/rank0.stdout.gz \
    results.db.lock experiments/other.db.lock reports/data/paper-reproduction.db \
    reports/data/.paper-reproduction.db.expanded; do
  if ! git -C "$src" check-ignore -q --no-index "$file"; then
    echo "$file is not ignored by .gitignore"
    status=1
  fi
done
if git -C "$src" check-ignore -q --no-index reports/data/paper-reproduction.db.tar.xz; then
  echo "reports/data/paper-reproduction.db.tar.xz is ignored by .gitignore"
  status=1
fi
exit $status
