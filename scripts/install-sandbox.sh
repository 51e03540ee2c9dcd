#!/usr/bin/env bash
# What the program sandbox needs from the system (docs/learner.md, "The layers around a
# role worker"): bubblewrap for the namespaces, libseccomp for the syscall filter. Both
# are Debian/Ubuntu packages; this installs them where apt can and says so where it
# cannot (then `relic learn` refuses to run programs unless --allow-reduced-isolation).
set -uo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing+=(libseccomp2)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo -n"
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
      || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; } \
      && exit 0
fi
echo "install-sandbox: could not install ${missing[*]}; install them with your package manager" \
     "(programs will not run unless you pass --allow-reduced-isolation)" >&2
exit 0
