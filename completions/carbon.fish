# fish completion for carbon
#
# Install:
#   carbon completion fish > ~/.config/fish/completions/carbon.fish
#
# What to offer comes from `carbon __complete -- WORD... CURRENT`, which prints one
# candidate per line as VALUE or VALUE<TAB>DESCRIPTION (fish's own format), and
# nothing at all on any error.

function __carbon_complete
    # Not installed (or not on PATH here): offer nothing rather than an error in the prompt.
    command -q carbon; or return 0
    # The words after `carbon` before the cursor's word, then that word (possibly empty).
    set -l words (commandline -opc)[2..-1]
    set -l current (commandline -ct)
    command carbon __complete -- $words "$current" 2>/dev/null
end

complete -c carbon -e
complete -c carbon -f -k -a '(__carbon_complete)'
