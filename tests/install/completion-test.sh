#!/usr/bin/env bash
# The bash completion for confinectl, without bash-completion installed: commands,
# options per command, values for --mode and --runner, and nothing of confinectl's
# once the confined command has started.
#   completion-test.sh COMPLETION_FILE
set -euo pipefail
source "$1"
fail() { echo "completion-test: $*" >&2; exit 1; }

complete_words() {  # the words so far; the last one is being completed
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _confinectl
  echo "${COMPREPLY[*]}"
}

[ "$(complete_words confinectl r)" = run ] || fail "command: $(complete_words confinectl r)"
[ "$(complete_words confinectl ch)" = check-config ] || fail "check-config"
[[ " $(complete_words confinectl run --rep) " == *" --report "* ]] || fail "run options: $(complete_words confinectl run --rep)"
[[ " $(complete_words confinectl run --rep) " == *" --report-fd "* ]] || fail "run options"
[ "$(complete_words confinectl run --mode r)" = read-only ] || fail "--mode values"
[ "$(complete_words confinectl run --network a)" = allow ] || fail "--network values"
[[ " $(complete_words confinectl wrap --net) " == *" --network "* ]] || fail "wrap options: $(complete_words confinectl wrap --net)"
# --deny-read and --protect take a path, and the options go on after it.
[[ " $(complete_words confinectl run --de) " == *" --deny-read "* ]] || fail "run --deny-read: $(complete_words confinectl run --de)"
[[ " $(complete_words confinectl wrap --deny-read ~/.ssh --pro) " == *" --protect "* ]] || fail "options after --deny-read PATH: $(complete_words confinectl wrap --deny-read ~/.ssh --pro)"
[[ " $(complete_words confinectl check-config --he) " == *" --help "* ]] || fail "check-config options: $(complete_words confinectl check-config --he)"
[ "$(complete_words confinectl wrap --runner se)" = seatbelt ] || fail "--runner values"
[[ " $(complete_words confinectl probe --) " == *" --json "* ]] || fail "probe options"
[[ " $(complete_words confinectl probe --pr) " == *" --prove "* ]] || fail "probe --prove"
[[ " $(complete_words confinectl plugins --pr) " != *" --prove "* ]] || fail "plugins offers --prove"
[[ " $(complete_words confinectl probe --st) " == *" --strict "* ]] || fail "probe --strict"
[[ " $(complete_words confinectl probe --wo) " == *" --workspace "* ]] || fail "probe --workspace: $(complete_words confinectl probe --wo)"
[[ " $(complete_words confinectl probe --) " != *" --report "* ]] || fail "probe offers run's options"
[[ " $(complete_words confinectl probe --) " != *" --network "* ]] || fail "probe offers policy options it does not judge"
# --plugin, before the command, takes a file; the command follows it.
[[ " $(complete_words confinectl --pl) " == *" --plugin "* ]] || fail "--plugin: $(complete_words confinectl --pl)"
[ "$(complete_words confinectl --plugin "${1%.bash-completion}.bash-compl")" = "$1" ] || fail "--plugin does not complete a file name"
[ "$(complete_words confinectl --plugin run r)" = run ] || fail "--plugin's value taken for the command: $(complete_words confinectl --plugin run r)"
[[ " $(complete_words confinectl --plugin ./p.so run --rep) " == *" --report "* ]] || fail "run options after --plugin"
# After "--" the words are the confined command's, not confinectl's.
[[ " $(complete_words confinectl run -- make --rep) " != *" --report "* ]] || fail "completed confinectl options inside the command"
echo "completion-test: ok"
