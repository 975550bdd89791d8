# gpu-tui GPU holders scan (issue 27): which processes of this instance hold a GPU's device file
# (/dev/nvidia<N>) open. In a container the driver's compute-apps list names host pids, or none;
# the device files a process holds are seen from inside. Defines gpu_holders; watch.sh carries
# it, and `status` / `kill` run it alone. `gpu_holders STATE` sets GH to these lines (not printed:
# the loop calls it without a subshell, so what it kept from the last scan stays;
# core/metrics/holders.py reads them):
#   g MINOR BUS UUID      per /proc/driver/nvidia/gpus/BUS/information readable here
#   d MINOR               per /dev/nvidia<N> present here
#   r MINOR               per /dev/dri/renderD<N> where there is no /dev/nvidia<N> (AMD GPUs)
#   m PID MINOR CLIENT VALUE [UNIT]   a render node's VRAM from /proc/PID/fdinfo (drm-memory-vram)
#   h PID MINOR           per process and device it holds
#   p PID UID PPID PGRP STARTTIME
#   c PID CMDLINE         (NULs as spaces)
#   u UID NAME
#   j PGRP JOB            per running gpu-tui job under STATE (its process group)
# Nothing is started but, when the holders changed since the last scan, one `tr` per holder for
# its command line: /proc/*/fd is read by a loop of shell builtins.
# GPU_TUI_SYSROOT (default empty) prefixes /dev and /proc/driver: tests point it at stand-ins.
gh_prev_key= gh_prev_out=
gpu_holders() {
  gh_r=${GPU_TUI_SYSROOT:-} gh_state=${1:-}
  gh_devs= gh_d=
  for gh_f in "$gh_r"/dev/nvidia[0-9]*; do
    case ${gh_f##*/nvidia} in '' | *[!0-9]*) continue ;; esac
    [ -e "$gh_f" ] && gh_devs="$gh_devs $gh_f" gh_d="${gh_d}d ${gh_f##*/nvidia}
"
  done
  if [ -z "$gh_devs" ]; then  # AMD (or any DRM) GPUs: their render nodes
    for gh_f in "$gh_r"/dev/dri/renderD[0-9]*; do
      case ${gh_f##*/renderD} in '' | *[!0-9]*) continue ;; esac
      [ -c "$gh_f" ] && gh_devs="$gh_devs $gh_f" gh_d="${gh_d}r ${gh_f##*/renderD}
"
    done
  fi
  gh_h= gh_pids= gh_mem=
  if [ -n "$gh_devs" ]; then
    # a loop of builtins: a test per open file (is it a character device?), and for those
    # only, whether it is one of the GPUs' device files (`-ef`: the same device and inode, so
    # nvidiactl, nvidia-uvm and a file merely named like one never count)
    gh_list=
    for gh_f in /proc/[0-9]*/fd/*; do
      [ -c "$gh_f" ] || continue
      for gh_x in $gh_devs; do
        if [ "$gh_f" -ef "$gh_x" ]; then gh_list="$gh_list${gh_f%/*} $gh_x ${gh_f##*/}
"; break; fi
      done
    done
    while read -r gh_dir gh_link gh_fd; do
      gh_p=${gh_dir#/proc/}; gh_p=${gh_p%/fd}
      case $gh_link in
        */renderD*)
          gh_m=${gh_link##*/renderD}
          # the DRM client's VRAM (amdgpu's fdinfo); a dup'd fd repeats its client id
          gh_c= gh_v= gh_un=
          while read -r gh_k gh_a gh_b; do
            case $gh_k in drm-client-id:) gh_c=$gh_a ;; drm-memory-vram:) gh_v=$gh_a gh_un=$gh_b ;; esac
          done < "/proc/$gh_p/fdinfo/$gh_fd" 2>/dev/null
          [ -n "$gh_v" ] && gh_mem="${gh_mem}m $gh_p $gh_m ${gh_c:--} $gh_v $gh_un
" ;;
        *) gh_m=${gh_link##*/nvidia} ;;
      esac
      case $gh_p$gh_m in '' | *[!0-9]*) continue ;; esac
      case " $gh_h " in *" $gh_p:$gh_m "*) continue ;; esac
      gh_h="$gh_h $gh_p:$gh_m"
      case " $gh_pids " in *" $gh_p "*) ;; *) gh_pids="$gh_pids $gh_p" ;; esac
    done <<EOF
$gh_list
EOF
  fi
  # each holder's stat line; the same holders as last time: the same answer
  gh_key=$gh_h gh_p_lines=
  for gh_p in $gh_pids; do
    gh_s=; read -r gh_s < "/proc/$gh_p/stat" 2>/dev/null || continue
    gh_s=${gh_s##*) }
    # shellcheck disable=SC2086
    set -- $gh_s
    gh_st=-; [ $# -ge 20 ] && eval "gh_st=\${20}"
    gh_u=
    while read -r gh_k gh_v _; do [ "$gh_k" = Uid: ] && { gh_u=$gh_v; break; }; done < "/proc/$gh_p/status" 2>/dev/null
    gh_p_lines="${gh_p_lines}p $gh_p ${gh_u:--} $2 $3 $gh_st
"
    gh_key="$gh_key $gh_p/$gh_st"
  done
  gh_key="$gh_key|$gh_d"
  if [ "$gh_key" != "$gh_prev_key" ]; then
    gh_out=$gh_d$gh_p_lines gh_uids=
    for gh_p in $gh_pids; do
      [ -r "/proc/$gh_p/cmdline" ] || continue
      gh_c=$(tr '\0\n' '  ' < "/proc/$gh_p/cmdline" 2>/dev/null)
      gh_out="${gh_out}c $gh_p $gh_c
"
    done
    for gh_x in $gh_h; do gh_out="${gh_out}h ${gh_x%:*} ${gh_x#*:}
"; done
    while read -r _ _ gh_u _; do
      case " $gh_uids " in *" $gh_u "*) ;; *) gh_uids="$gh_uids $gh_u" ;; esac
    done <<EOF
$gh_p_lines
EOF
    if [ -n "$gh_uids" ] && [ -r /etc/passwd ]; then
      while IFS=: read -r gh_n _ gh_i _; do
        case " $gh_uids " in *" $gh_i "*) gh_out="${gh_out}u $gh_i $gh_n
" ;; esac
      done < /etc/passwd
    fi
    gh_prev_key=$gh_key gh_prev_out=$gh_out
  fi
  gh_g=
  for gh_f in "$gh_r"/proc/driver/nvidia/gpus/*/information; do
    [ -r "$gh_f" ] || continue
    gh_b=${gh_f%/information}; gh_b=${gh_b##*/} gh_m= gh_id=
    while IFS=: read -r gh_k gh_v; do
      gh_v=${gh_v#"${gh_v%%[0-9A-Za-z]*}"}
      case $gh_k in 'Device Minor') gh_m=${gh_v%%[!0-9]*} ;; 'GPU UUID') gh_id=${gh_v%%[!0-9A-Za-z-]*} ;; esac
    done < "$gh_f"
    [ -n "$gh_m" ] && gh_g="${gh_g}g $gh_m $gh_b ${gh_id:--}
"
  done
  gh_j=
  if [ -n "$gh_state" ]; then
    for gh_f in "$gh_state"/jobs/*/pid; do
      [ -f "$gh_f" ] && [ ! -f "${gh_f%/pid}/exit_code" ] || continue
      gh_x=; read -r gh_x < "$gh_f"
      gh_jd=${gh_f%/pid}
      case $gh_x in '' | *[!0-9]*) ;; *) gh_j="${gh_j}j $gh_x ${gh_jd##*/}
" ;; esac
    done
  fi
  GH=$gh_g$gh_prev_out$gh_mem$gh_j
}
