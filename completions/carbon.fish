# fish completion for carbon
#
# Install:
#   carbon completion fish > ~/.config/fish/completions/carbon.fish
#
# What to offer comes from `carbon __complete -- WORD... CURRENT`, which prints one
# candidate per line as VALUE or VALUE<TAB>DESCRIPTION (fish's own format), or the
# one line `:files` where a file name goes, and nothing at all on any error.

function __carbon_complete
    # Not installed (or not on PATH here): offer nothing rather than an error in the prompt.
    command -q carbon; or return 0
    # The words after `carbon` before the cursor's word, then that word (possibly empty).
    set -l words (commandline -opc)[2..-1]
    set -l current (commandline -ct)
    set -l out (command carbon __complete -- $words "$current" 2>/dev/null)
    # A file name (`--from-csv FILE`, or `--from-csv=FILE` in one word): fish's own completion of paths.
    if test "$out" = ':files'
        set -l prefix (string match -r -- '^--[^=]*=' $current)
        set -l path (string replace -r -- '^--[^=]*=' '' $current)
        # A command fish has no completions for gets fish's completion of paths (~ and escapes too).
        for line in (complete -C"__carbon_no_such_command $path")
            echo "$prefix$line"
        end
        return 0
    end
    set -q out[1]; and printf '%s\n' $out
end

complete -c carbon -e
complete -c carbon -f -k -a '(__carbon_complete)'
