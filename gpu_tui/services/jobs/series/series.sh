#!/bin/sh
# gpu-tui series summariser, version 1. Shipped by gpu-tui to <state_dir>/bin/series-v1.sh (with
# bin/series-v1/: summariser.py and gpu-tui's log rules). Run as:
#   sh series-v1.sh STATE watch JOBDIR   the job runner, detached (setsid -f): a catch-up every
#                                        30 s while the job runs, one more at its end, then exit
#   sh series-v1.sh STATE once JOBDIR [GEN FROM [thin]]   a client (`gpu-tui metrics`): one catch-up,
#                                        then the points (from byte FROM of generation GEN)
# It needs python3 >= 3.7 (the log rules' dataclasses); without one `once` says `@@nopython`
# and the client reads the log's end instead.
state=$1 mode=$2 d=$3
# `-V` answers without starting the interpreter's site machinery
for c in python3 python; do
  command -v "$c" > /dev/null 2>&1 || continue
  case $("$c" -V 2>&1) in
    'Python 3.'[7-9]* | 'Python 3.'[1-9][0-9]*)
      exec "$c" -S "$state/bin/series-v1/summariser.py" "$@" ;;
  esac
done
[ "$mode" = once ] && echo "@@nopython"
exit 0
