#!/usr/bin/env bash
# DESIGN.md is where the tree says it is (the top of the repository), and
# every "DESIGN.md section N" or "DESIGN.md §N" in the tracked files names a
# section it has ("## N. ...").
#   design_references_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
[[ -s DESIGN.md ]] || { echo "DESIGN.md is cited but missing"; exit 1; }
status=0
while IFS= read -r hit; do
  file=${hit%%:*}
  number=$(sed -nE 's/.*DESIGN\.md( section |[[:space:]]*§)([0-9]+).*/\2/p' <<<"${hit#*:}")
  if ! grep -qE "^## $number\. " DESIGN.md; then
    echo "$file cites DESIGN.md section $number, which DESIGN.md does not have"
    status=1
  fi
done < <(git ls-files -z | xargs -0 grep -oE 'DESIGN\.md( section |[[:space:]]*§)[0-9]+' | sort -u)
[[ $status == 0 ]] && echo "every citation of DESIGN.md names one of its sections"
exit $status
